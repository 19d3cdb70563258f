export * from './checkpoints';
export * from './log-follower';
export * from './projection';
export * from './relay';
export * from './service-storage';
export * from './deferred-sync';
export * from './topic-projection';
export * from './kept-answers';
