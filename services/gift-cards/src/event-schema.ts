/**
 * The gift cards service's one registry of event schema versions (`EventUpcasters` in `@switchyard/eventstore`): its
 * service host and its relay read through it, and every append is stamped with its version. No gift card event has
 * changed shape yet: each is at version 1, and a change registers its upcaster here.
 */
import { EventUpcasters } from '@switchyard/eventstore';

export const giftCardsUpcasters = new EventUpcasters();
