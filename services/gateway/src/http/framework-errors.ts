/**
 * The failures Fastify answers itself, before Nest and its exception filter see the request, rendered in the
 * spec's error body like every other answer: a URL whose percent-encoding does not decode or whose path parameter
 * is longer than the router takes (`frameworkErrors`), and a request that is not HTTP/1.1 at all — a broken request
 * line, framing or header bytes (400), headers over Node's size limit (431) (`clientErrorHandler`).
 */
import type { Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import { ApiError } from '@switchyard/api';
import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { sendError, toApiFailure } from './api-exception.filter';

const logger = new Logger('gateway');

/** Fastify's `frameworkErrors`: routed through the same mapping as the exception filter (400). */
export function renderFrameworkError(error: Error, request: FastifyRequest, reply: FastifyReply): void {
  sendError(reply, toApiFailure(error, request, logger));
}

/** A head over Node's size limit is a 431; anything else Node cannot parse (or did not get in time) a 400. */
function clientErrorAnswer(error: NodeJS.ErrnoException): { error: ApiError; reason: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return { error: new ApiError(431, 'The request headers are too large'), reason: 'Request Header Fields Too Large' };
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { error: ApiError.badRequest('The request was not received in time'), reason: 'Bad Request' };
  return { error: ApiError.badRequest('The request is not valid HTTP/1.1'), reason: 'Bad Request' };
}

/**
 * Fastify's `clientErrorHandler` (Node's `clientError`): the answer in the spec's body, with `Connection: close` —
 * the connection is closed after it, and a client must not send its next request on it. Written only when no
 * answer has started on the connection, as Node's own handler does.
 */
export const renderClientError: NonNullable<FastifyServerOptions['clientErrorHandler']> = (
  error: NodeJS.ErrnoException,
  socket: Socket,
) => {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const answer = clientErrorAnswer(error);
    const body = JSON.stringify(answer.error.toBody());
    socket.write(
      `HTTP/1.1 ${answer.error.status} ${answer.reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
};
