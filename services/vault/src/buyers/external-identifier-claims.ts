/**
 * Keeps a buyer's external identifier unique per merchant account across processes, with claim streams
 * (`buyer-external-identifier.ts`), also when a process died between a claim and the buyer's own event.
 *
 * A claim whose holder does not use the identifier (a create that stopped after claiming; a change or delete that
 * stopped before releasing) is taken over — but only after fencing the holder: `ExternalIdentifierClaimFenced` is
 * appended to the holder's stream at the revision where it was seen not to use the identifier, and the claim is then
 * moved at the revision read before that. A holder that was taking the identifier (back) at that moment must
 * claim it again (which moves the claim stream on) and append on top of the fence; one of the two appends fails,
 * so no two live buyers ever hold one identifier. Releasing one's own claim after a change or delete is the same
 * take-over towards nobody.
 */
import { appendEvents, asDomainEvent, handleCommand } from '@switchyard/decider';
import { WrongExpectedRevisionError, type EventStore } from '@switchyard/eventstore';
import { buyerDecider, buyerStream, ExternalIdentifierInUse } from './buyer';
import {
  externalIdentifierClaim,
  externalIdentifierClaimStream,
  ExternalIdentifierTaken,
  type ExternalIdentifierClaimCommand,
  type ExternalIdentifierClaimEvent,
  type ExternalIdentifierClaimState,
} from './buyer-external-identifier';

/** Conflicts tolerated before the caller gets one (a 409 "retry"); each round re-reads everything. */
const MAX_ROUNDS = 5;

export class ExternalIdentifierClaims {
  constructor(
    private readonly store: EventStore,
    private readonly now: () => Date,
  ) {}

  /** The buyer holding the claim (possibly one that no longer uses it); null when free. */
  async holder(merchantAccountId: string, externalIdentifier: string): Promise<string | null> {
    const { state } = await this.read(merchantAccountId, externalIdentifier);
    return state.status === 'claimed' ? state.buyerId : null;
  }

  /**
   * Claims the identifier for `buyerId` (again, when it holds it already). Throws `ExternalIdentifierTaken` with the
   * holder when another buyer uses it; a claim another buyer left behind is taken over.
   */
  async claim(merchantAccountId: string, externalIdentifier: string, buyerId: string): Promise<void> {
    const key = { merchantAccountId, externalIdentifier, buyerId };
    await this.rounds(merchantAccountId, externalIdentifier, async (state) => {
      if (state.status === 'free' || state.buyerId === buyerId)
        return { type: 'ClaimBuyerExternalIdentifier', data: key, metadata: this.metadata() };
      const holder = state.buyerId;
      if (await this.fence(merchantAccountId, externalIdentifier, holder)) throw new ExternalIdentifierTaken(holder);
      return {
        type: 'TakeOverBuyerExternalIdentifier',
        data: { ...key, previousBuyerId: holder },
        metadata: this.metadata(),
      };
    });
  }

  /** Releases `buyerId`'s claim, unless the buyer uses the identifier (again) by now. */
  async release(merchantAccountId: string, externalIdentifier: string, buyerId: string): Promise<void> {
    await this.rounds(merchantAccountId, externalIdentifier, async (state) => {
      if (state.status !== 'claimed' || state.buyerId !== buyerId) return null;
      if (await this.fence(merchantAccountId, externalIdentifier, buyerId)) return null;
      return {
        type: 'ReleaseBuyerExternalIdentifier',
        data: { merchantAccountId, externalIdentifier, buyerId },
        metadata: this.metadata(),
      };
    });
  }

  /**
   * Reads the claim, lets `choose` pick a command (null: nothing to do), and appends its events at the revision
   * read — never re-deciding on a newer claim with the fence of an older round.
   */
  private async rounds(
    merchantAccountId: string,
    externalIdentifier: string,
    choose: (state: ExternalIdentifierClaimState) => Promise<ExternalIdentifierClaimCommand | null>,
  ): Promise<void> {
    const streamId = externalIdentifierClaimStream(merchantAccountId, externalIdentifier);
    for (let round = 1; ; round += 1) {
      const { state, revision } = await this.read(merchantAccountId, externalIdentifier);
      const command = await choose(state);
      const events = command ? externalIdentifierClaim.decide(command, state) : [];
      if (events.length === 0) return;
      try {
        await appendEvents(this.store, streamId, events, { expectedRevision: revision });
        return;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError) || round >= MAX_ROUNDS) throw error;
      }
    }
  }

  /** Fences `buyerId`'s use of the identifier; true when the buyer uses it (nothing fenced). */
  private async fence(merchantAccountId: string, externalIdentifier: string, buyerId: string): Promise<boolean> {
    try {
      await handleCommand(this.store, buyerStream(buyerId), buyerDecider, {
        type: 'FenceExternalIdentifierClaim',
        data: { id: buyerId, merchantAccountId, externalIdentifier },
        metadata: this.metadata(),
      });
      return false;
    } catch (error) {
      if (error instanceof ExternalIdentifierInUse) return true;
      throw error;
    }
  }

  private async read(merchantAccountId: string, externalIdentifier: string) {
    const recorded = await this.store.readStream(externalIdentifierClaimStream(merchantAccountId, externalIdentifier));
    const state = recorded.reduce(
      (current, event) => externalIdentifierClaim.evolve(current, asDomainEvent<ExternalIdentifierClaimEvent>(event)),
      externalIdentifierClaim.initialState(),
    );
    return { state, revision: recorded.length === 0 ? ('no_stream' as const) : recorded.length - 1 };
  }

  private metadata() {
    return { now: this.now().toISOString() };
  }
}
