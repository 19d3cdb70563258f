/** The gateway's digital wallet endpoints. */
export { DigitalWalletsController } from './digital-wallets.controller';
