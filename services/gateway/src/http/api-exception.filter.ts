/** Renders every failure once, in the spec's error body (422: the validation body). Never a stack trace. */
import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ApiError, BODY_LIMIT_BYTES, errorCodes, methodsForPath, RequestValidationError } from '@switchyard/api';
import type { FastifyReply, FastifyRequest } from 'fastify';

@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('gateway');

  catch(exception: unknown, host: ArgumentsHost): void {
    const context = host.switchToHttp();
    const request = context.getRequest<FastifyRequest>();
    const reply = context.getResponse<FastifyReply>();
    sendError(reply, toApiFailure(exception, request, this.logger));
  }
}

export type ApiFailure = { status: number; body: unknown; headers?: Record<string, string> };

export function toApiFailure(exception: unknown, request: FastifyRequest, logger: Pick<Logger, 'error'>): ApiFailure {
  if (exception instanceof RequestValidationError) return { status: 422, body: exception.toBody() };
  if (exception instanceof ApiError) {
    if (exception.status >= 500)
      logger.error(`${request.method} ${pathOnly(request)}: ${describe(exception.cause ?? exception)}`);
    return { status: exception.status, body: exception.toBody() };
  }
  const status = httpStatusOf(exception);
  if (status === 404) {
    const path = request.url.split('?')[0] ?? request.url;
    const allowed = methodsForPath(path);
    // A path the router did not match (a trailing slash, say) whose shape an endpoint has: 405 only when that
    // endpoint lacks the method, never with an Allow header naming the method just refused.
    if (allowed.length > 0 && !allowed.includes(request.method.toUpperCase() as (typeof allowed)[number])) {
      return { status: 405, body: ApiError.methodNotAllowed().toBody(), headers: { allow: allowed.join(', ') } };
    }
    return { status: 404, body: ApiError.notFound().toBody() };
  }
  if (status === 413 || (exception as { code?: unknown } | null)?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return { status: 413, body: ApiError.payloadTooLarge(request.routeOptions.bodyLimit ?? BODY_LIMIT_BYTES).toBody() };
  }
  if (status !== undefined && status >= 400 && status < 500) {
    return { status: 400, body: ApiError.badRequest(clientErrorMessage(exception, status)).toBody() };
  }
  logger.error(`${request.method} ${pathOnly(request)}: ${describe(exception)}`);
  return { status: 500, body: ApiError.serverError().toBody() };
}

/**
 * The request's path without its query string, for log lines (issue 22, item 7): a query carries buyers'
 * identifiers, emails and the buyer-return token (`?token=`), none of which may reach a log.
 */
const pathOnly = (request: FastifyRequest): string => request.url.split('?')[0] ?? '';

export function sendError(reply: FastifyReply, failure: ApiFailure): void {
  if (failure.headers) for (const [name, value] of Object.entries(failure.headers)) reply.header(name, value);
  reply
    .status(failure.status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify(failure.body));
}

function httpStatusOf(exception: unknown): number | undefined {
  if (exception instanceof HttpException) return exception.getStatus();
  const statusCode = (exception as { statusCode?: unknown } | null)?.statusCode;
  return typeof statusCode === 'number' ? statusCode : undefined;
}

/**
 * Framework-level client errors (unsupported media type, unparseable JSON, a URL that does not decode, a path
 * parameter longer than the router takes) become 400s; a body over the limit is the one 413 (above).
 */
function clientErrorMessage(exception: unknown, status: number): string {
  const code = (exception as { code?: unknown } | null)?.code;
  if (status === 415 || code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return 'Unsupported Content-Type: send application/json';
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || exception instanceof SyntaxError)
    return 'The request body is not valid JSON';
  if (code === 'FST_ERR_BAD_URL') return 'The request URL is not valid: a percent-encoding does not decode to UTF-8';
  if (code === 'FST_ERR_MAX_PARAM_LENGTH') return 'A path parameter of the request URL is too long';
  if (status in errorCodes) return (exception as Error).message || 'The request was invalid';
  return `The request was invalid (${status})`;
}

const describe = (error: unknown): string => (error instanceof Error ? (error.stack ?? error.message) : String(error));
