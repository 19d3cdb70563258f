export * from './decider';
export * from './command-handler';
