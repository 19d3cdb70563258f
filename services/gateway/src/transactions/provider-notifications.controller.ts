import { Controller, Inject, Req, Res } from '@nestjs/common';
import { Endpoint } from '@switchyard/api';
import {
  transactionsPatterns,
  type ProviderNotificationAnswer,
  type ProviderNotificationRequest,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import { Input, type EndpointInput } from '../http/input';
import { RouteBody } from '../http/json-body';
import { RPC_CLIENT } from '../tokens';

const byPaymentService = z.object({ payment_service_id: z.uuid() });
type ByPaymentService = z.infer<typeof byPaymentService>;

/**
 * Where payment services send their notifications (webhooks). No token: the provider signs the body instead, so the
 * body is forwarded exactly as received (any content type, never parsed: a re-serialization would break the
 * signature) with every header, and the transactions service verifies it with the payment service's secret. The
 * answer is the one the connection's provider expects (Adyen: 200 `[accepted]`), else 204.
 */
@Controller()
export class ProviderNotificationsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'receive_provider_notification',
    method: 'POST',
    path: '/payment-services/{payment_service_id}/notifications',
    summary:
      "Receive a notification of the payment service's provider; the body is verified against the provider's signature",
    tags: ['Payment services'],
    auth: 'public',
    merchantAccount: 'ignored',
    params: byPaymentService,
    status: 204,
    response: {
      description: 'Accepted; a provider that expects an answer body gets 200 with it (Adyen: `[accepted]`)',
    },
  })
  @RouteBody({ raw: true })
  async receive(
    @Input() input: EndpointInput<unknown, unknown, ByPaymentService>,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const notification: ProviderNotificationRequest = {
      payment_service_id: input.params.payment_service_id,
      headers: headersOf(request.headers),
      raw_body: typeof request.body === 'string' ? request.body : '',
    };
    const answer = await this.rpc.call<ProviderNotificationAnswer | null>(
      transactionsPatterns.notification,
      notification,
    );
    if (answer) await reply.status(answer.status).header('content-type', answer.content_type).send(answer.body);
    else await reply.status(204).send();
  }
}

/** Header names lower-cased (Node already does), values as strings (repeated headers joined as HTTP joins them). */
function headersOf(headers: IncomingHttpHeaders): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}
