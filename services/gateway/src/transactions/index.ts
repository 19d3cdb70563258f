export { TransactionsController } from './transactions.controller';
export { CapturesController } from './captures.controller';
export { RefundsController } from './refunds.controller';
export { ProviderNotificationsController } from './provider-notifications.controller';
export { SettlementFilesController } from './settlement-files.controller';
export { BuyerReturnController } from './buyer-return.controller';
