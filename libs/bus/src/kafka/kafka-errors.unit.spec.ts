import {
  KafkaJSConnectionError,
  KafkaJSError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
} from 'kafkajs';
import { BusUnavailableError } from '../message-bus';
import { toBusError } from './kafka-errors';
import { kafkaBrokersFromEnv } from './kafka-message-bus';

describe('toBusError', () => {
  it('keeps kafkajs retriable flag', () => {
    expect(toBusError(new KafkaJSConnectionError('refused'), 'publish')).toMatchObject({
      type: 'bus_unavailable',
      retriable: true,
    });
    expect(toBusError(new KafkaJSNonRetriableError('bad request'), 'publish')).toMatchObject({ retriable: false });
  });

  it('treats retries that ran out as retriable, as kafkajs does before restarting a consumer', () => {
    const exhausted = new KafkaJSNumberOfRetriesExceeded(new KafkaJSConnectionError('refused'), {
      retryCount: 5,
      retryTime: 100,
    });
    const error = toBusError(exhausted, 'ping');
    expect(error).toBeInstanceOf(BusUnavailableError);
    expect(error).toMatchObject({ retriable: true, cause: exhausted });
  });

  it('follows the cause of a wrapped kafkajs error', () => {
    const wrapped = Object.assign(new KafkaJSError('outer', { retriable: true }), {
      cause: new KafkaJSNonRetriableError('inner'),
    });
    expect(toBusError(wrapped, 'publish')).toMatchObject({ retriable: false });
  });

  it('passes errors that are not kafkajs errors through unchanged', () => {
    const bug = new TypeError('not a bus problem');
    expect(toBusError(bug, 'publish')).toBe(bug);
  });
});

describe('kafkaBrokersFromEnv', () => {
  it('splits KAFKA_BROKERS and defaults to the dev broker', () => {
    expect(kafkaBrokersFromEnv({ KAFKA_BROKERS: ' a:9092, b:9092 ,' })).toEqual(['a:9092', 'b:9092']);
    expect(kafkaBrokersFromEnv({})).toEqual(['127.0.0.1:9092']);
  });
});
