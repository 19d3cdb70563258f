/** The gateway's flow endpoints. */
export { FlowRulesController } from './flow-rules.controller';
