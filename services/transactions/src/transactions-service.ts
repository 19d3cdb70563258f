/**
 * The transactions service: feature slices over its own event store and local SQLite (payment services — the
 * connections — first; transactions, captures and refunds next). Framework-free like identity: the embedded
 * runtime registers its handlers in process, `main.ts` serves them over NestJS TCP.
 */
import { transactionsPatterns } from '@switchyard/contracts';
import type { RpcHandlers } from '@switchyard/rpc';
import { ServiceHost, type ServiceHostOptions } from '@switchyard/service';
import { PaymentServices } from './payment-services/payment-services.slice';

export type TransactionsServiceOptions = ServiceHostOptions;

export class TransactionsService {
  readonly paymentServices: PaymentServices;
  private readonly host: ServiceHost;

  constructor(options: TransactionsServiceOptions) {
    this.host = new ServiceHost(options);
    this.paymentServices = new PaymentServices(this.host.context);
    this.host.add(this.paymentServices);
  }

  start(): Promise<void> {
    return this.host.catchUpAndFollow();
  }

  stop(): Promise<void> {
    return this.host.stop();
  }

  catchUp(): Promise<void> {
    return this.host.catchUp();
  }

  rpcHandlers(): RpcHandlers {
    return this.host.rpcHandlers(transactionsPatterns.ping);
  }
}
