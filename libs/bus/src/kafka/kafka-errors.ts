import type { KafkaJSError } from 'kafkajs';
import { BusUnavailableError } from '../message-bus';
import { kafkajs } from './kafkajs';

const rootCause = (error: KafkaJSError): unknown => {
  let current: unknown = error;
  while (current instanceof kafkajs().KafkaJSError && current.cause !== undefined) current = current.cause;
  return current;
};

/**
 * kafkajs's own rule for "worth trying again", as its consumer applies it before restarting itself
 * (src/consumer/index.js, onCrash): retries that ran out are retriable, otherwise the root cause's flag decides.
 * The outer `retriable` of KafkaJSNumberOfRetriesExceeded is false only in the sense "kafkajs will not retry it
 * again"; a refused connection underneath it is still a condition that passes.
 */
export const isRetriable = (error: KafkaJSError): boolean => {
  if (error.name === 'KafkaJSNumberOfRetriesExceeded') return true;
  const cause = rootCause(error);
  return cause instanceof kafkajs().KafkaJSError ? cause.retriable : error.retriable;
};

/** kafkajs errors become BusUnavailableError; anything else (a bug of ours, a handler's error) passes unchanged. */
export const toBusError = (error: unknown, action: string): unknown => {
  if (error instanceof BusUnavailableError || !(error instanceof kafkajs().KafkaJSError)) return error;
  return new BusUnavailableError(`Kafka ${action} failed: ${error.message}`, isRetriable(error), { cause: error });
};
