/**
 * A stand-in for `SecureFields` in the wrapper's tests: records the fields added and removed and the handlers
 * subscribed, and lets a test fire the library's events itself.
 */
import type { SecureFieldsEventName, SecureFieldsEvents } from '@switchyard/secure-fields';
import type { SecureFieldsInstance } from '../secure-fields-react';

export class FakeSecureFields implements SecureFieldsInstance {
  readonly added: string[] = [];
  readonly removed: string[] = [];
  submitted = 0;
  destroyed = false;
  private readonly handlers = new Map<SecureFieldsEventName, Set<(detail: never) => void>>();

  addCardNumberField(container: HTMLElement | string): void {
    this.add('number', container);
  }

  addExpiryDateField(container: HTMLElement | string): void {
    this.add('expiry', container);
  }

  addSecurityCodeField(container: HTMLElement | string): void {
    this.add('security_code', container);
  }

  removeField(field: string): void {
    this.removed.push(field);
  }

  on<E extends SecureFieldsEventName>(event: E, handler: (detail: SecureFieldsEvents[E]) => void): () => void {
    let set = this.handlers.get(event);
    if (!set) this.handlers.set(event, (set = new Set()));
    const registered = handler as (detail: never) => void;
    set.add(registered);
    return () => {
      set.delete(registered);
    };
  }

  /** How many handlers listen to the event now. */
  listeners(event: SecureFieldsEventName): number {
    return this.handlers.get(event)?.size ?? 0;
  }

  emit<E extends SecureFieldsEventName>(event: E, detail: SecureFieldsEvents[E]): void {
    for (const handler of [...(this.handlers.get(event) ?? [])])
      (handler as (value: SecureFieldsEvents[E]) => void)(detail);
  }

  async submit(): Promise<void> {
    this.submitted += 1;
  }

  destroy(): void {
    this.destroyed = true;
  }

  private add(field: string, container: HTMLElement | string): void {
    const where = typeof container === 'string' ? container : container.getAttribute('data-secure-field-container');
    this.added.push(`${field}@${where ?? '?'}`);
  }
}
