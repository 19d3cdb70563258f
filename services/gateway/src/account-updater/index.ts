/** The gateway's account updater endpoint. */
export { AccountUpdaterController } from './account-updater.controller';
