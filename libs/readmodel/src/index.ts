export * from './checkpoints';
export * from './deferred-sync';
export * from './log-follower';
export * from './projection';
export * from './relay';
export * from './service-storage';
