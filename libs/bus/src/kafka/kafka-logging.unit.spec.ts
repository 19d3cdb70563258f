import { logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { kafkaLogLevels } from './kafka-logging';

describe('kafkaLogLevels', () => {
  it("are kafkajs's own logLevel values (written out so that the module does not load kafkajs)", () => {
    expect(kafkaLogLevels).toEqual({
      nothing: logLevel.NOTHING,
      error: logLevel.ERROR,
      warn: logLevel.WARN,
      info: logLevel.INFO,
      debug: logLevel.DEBUG,
    });
  });
});
