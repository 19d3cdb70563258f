/** The transactions service: its topic and the RPC patterns the gateway calls. */
export const transactionsTopic = 'transactions.events';

export const transactionsPatterns = {
  ping: 'transactions.ping',
} as const;
