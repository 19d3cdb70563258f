/**
 * React components over `@switchyard/secure-fields`: `<SecureFieldsProvider serviceUrl sessionId>` makes one
 * `SecureFields` per session (in an effect: nothing touches the DOM while rendering, so server rendering works), each
 * field component renders the element its iframe goes into, and `useSecureFields()` gives `submit`. The card data stays
 * in the iframes; these components only see what the library's events carry. Written with `createElement` rather than
 * JSX so the package needs no JSX transform anywhere (tests, type checking, the bundle).
 */
import {
  SecureFields,
  type CardDetails,
  type ChangeEvent,
  type FieldName,
  type FieldOptions,
  type SubmitOptions,
} from '@switchyard/secure-fields';
import {
  createContext,
  createElement,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  type CSSProperties,
  type ReactElement,
  type ReactNode,
} from 'react';

/** What the components use of a `SecureFields` (a test, or a page that also uses the plain API, can pass its own). */
export type SecureFieldsInstance = Pick<
  SecureFields,
  'addCardNumberField' | 'addExpiryDateField' | 'addSecurityCodeField' | 'removeField' | 'on' | 'submit' | 'destroy'
>;

interface SecureFieldsContextValue {
  readonly instance: SecureFieldsInstance | null;
  readonly ready: boolean;
}

const SecureFieldsContext = createContext<SecureFieldsContextValue | null>(null);

export interface SecureFieldsProviderProps {
  /** Where Switchyard is served, as the browser reaches it. */
  readonly serviceUrl: string;
  /** The checkout session the card is attached to. */
  readonly sessionId: string;
  /** Use this instance instead of making one; the provider then leaves destroying it to its owner. */
  readonly instance?: SecureFieldsInstance;
  readonly children?: ReactNode;
}

export function SecureFieldsProvider({
  serviceUrl,
  sessionId,
  instance,
  children,
}: SecureFieldsProviderProps): ReactElement {
  const [current, setCurrent] = useState<SecureFieldsInstance | null>(null);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    const made = instance ?? new SecureFields({ serviceUrl, sessionId });
    setCurrent(made);
    setReady(false);
    const off = made.on('ready', () => setReady(true));
    return () => {
      off();
      if (!instance) made.destroy();
      setCurrent(null);
      setReady(false);
    };
  }, [serviceUrl, sessionId, instance]);
  const value = useMemo(() => ({ instance: current, ready }), [current, ready]);
  return createElement(SecureFieldsContext.Provider, { value }, children);
}

function useSecureFieldsContext(user: string): SecureFieldsContextValue {
  const context = useContext(SecureFieldsContext);
  if (!context) throw new Error(`${user} must be used inside <SecureFieldsProvider>`);
  return context;
}

export interface SecureFieldProps extends FieldOptions {
  readonly className?: string;
  readonly style?: CSSProperties;
  /** The field's state changed (never its value). */
  readonly onChange?: (event: ChangeEvent) => void;
  readonly onBlur?: () => void;
}

export interface CardNumberProps extends SecureFieldProps {
  /** Spec, Events rule 5: fires again when a longer number resolves the country. */
  readonly onCardDetailsChanged?: (details: CardDetails) => void;
}

type Add = (instance: SecureFieldsInstance, container: HTMLElement, options: FieldOptions) => void;

const ADD: Record<FieldName, Add> = {
  number: (instance, container, options) => instance.addCardNumberField(container, options),
  expiry: (instance, container, options) => instance.addExpiryDateField(container, options),
  security_code: (instance, container, options) => instance.addSecurityCodeField(container, options),
};

const COMPONENT_NAMES: Record<FieldName, string> = {
  number: '<CardNumber>',
  expiry: '<ExpiryDate>',
  security_code: '<SecurityCode>',
};

function useFieldElement(field: FieldName, props: CardNumberProps): ReactElement {
  const { instance } = useSecureFieldsContext(COMPONENT_NAMES[field]);
  const container = useRef<HTMLDivElement>(null);
  // The latest handlers, read when an event arrives: a new function on every render does not re-subscribe.
  const handlers = useRef(props);
  handlers.current = props;
  const { placeholder } = props;

  useEffect(() => {
    const element = container.current;
    if (!instance || !element) return undefined;
    ADD[field](instance, element, placeholder === undefined ? {} : { placeholder });
    const unsubscribe = [
      instance.on('change', (event) => {
        if (event.field === field) handlers.current.onChange?.(event);
      }),
      instance.on('blur', (event) => {
        if (event.field === field) handlers.current.onBlur?.();
      }),
      ...(field === 'number'
        ? [instance.on('card-details-changed', (details) => handlers.current.onCardDetailsChanged?.(details))]
        : []),
    ];
    return () => {
      for (const off of unsubscribe) off();
      instance.removeField(field);
    };
  }, [instance, field, placeholder]);

  return createElement('div', {
    ref: container,
    className: props.className,
    style: props.style,
    'data-secure-field-container': field,
  });
}

export function CardNumber(props: CardNumberProps): ReactElement {
  return useFieldElement('number', props);
}

export function ExpiryDate(props: SecureFieldProps): ReactElement {
  return useFieldElement('expiry', props);
}

export function SecurityCode(props: SecureFieldProps): ReactElement {
  return useFieldElement('security_code', props);
}

export interface UseSecureFields {
  /**
   * Posts the fields from inside the frames to the checkout session; rejects with an Error saying why. With
   * `{ paymentMethodId }`, a stored payment method with the code typed into `<SecurityCode>` instead of a card.
   */
  readonly submit: (options?: SubmitOptions) => Promise<void>;
  /** Every field's frame has loaded. */
  readonly ready: boolean;
}

export function useSecureFields(): UseSecureFields {
  const { instance, ready } = useSecureFieldsContext('useSecureFields()');
  const submit = useCallback(
    (options?: SubmitOptions) =>
      instance ? instance.submit(options) : Promise.reject(new Error('The secure fields are not ready')),
    [instance],
  );
  return useMemo(() => ({ submit, ready }), [submit, ready]);
}
