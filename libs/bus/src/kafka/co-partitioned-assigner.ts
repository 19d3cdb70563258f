import type { PartitionAssigner } from 'kafkajs';
import { kafkajs } from './kafkajs';

/**
 * Partition p of every topic of a group goes to the same member (members sorted by id, p mod their count), so a
 * topic and its dead-letter topic — created with as many partitions, keyed alike — are co-assigned: the member that
 * owns a stream's partition also reads the replay and discard commands of that stream. kafkajs's round-robin assigner
 * spreads all topic-partitions of a group in one sequence and would not. The cost: topics of one partition all go
 * to the first member, where round robin would spread them.
 */
export const coPartitionedAssigner: PartitionAssigner = ({ cluster }) => ({
  name: 'SwitchyardCoPartitioned',
  version: 0,
  async assign({ members, topics }) {
    const memberIds = members.map((member) => member.memberId).sort();
    const assignment = new Map<string, Record<string, number[]>>(memberIds.map((id) => [id, {}]));
    for (const topic of topics) {
      for (const { partitionId } of cluster.findTopicPartitionMetadata(topic)) {
        const member = assignment.get(memberIds[partitionId % memberIds.length]!)!;
        (member[topic] ??= []).push(partitionId);
      }
    }
    return memberIds.map((memberId) => ({
      memberId,
      memberAssignment: kafkajs().AssignerProtocol.MemberAssignment.encode({
        version: 0,
        assignment: assignment.get(memberId)!,
        userData: Buffer.alloc(0),
      }),
    }));
  },
  protocol({ topics }) {
    return {
      name: 'SwitchyardCoPartitioned',
      metadata: kafkajs().AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }),
    };
  },
});
