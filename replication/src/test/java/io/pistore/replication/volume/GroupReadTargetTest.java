package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.Test;

/** Where a linearizable read's attempts go: never beside an unanswered attempt to the peer it went to. */
class GroupReadTargetTest {
    private static final RaftPeerId N1 = RaftPeerId.valueOf("n1");
    private static final RaftPeerId N2 = RaftPeerId.valueOf("n2");
    private static final RaftPeerId N3 = RaftPeerId.valueOf("n3");
    private static final List<RaftPeerId> MEMBERS = List.of(N1, N2, N3);

    private static List<RaftPeerId> asked(RaftPeerId... p) {
        return new ArrayList<>(Arrays.asList(p));
    }

    private static Set<RaftPeerId> gone(RaftPeerId... p) {
        return new HashSet<>(Arrays.asList(p));
    }

    @Test
    void aFirstAttemptGoesToTheLeaderThisPeerKnowsWhereTheClientTakesAnother() {
        assertEquals(N2, GroupRead.firstTarget(N2, N1));
        assertNull(GroupRead.firstTarget(N1, N1), "the same: the client's leader");
        assertNull(GroupRead.firstTarget(null, N1), "none known here: the client's leader");
        assertEquals(N3, GroupRead.firstTarget(N3, null));
    }

    /**
     * The case that stalled a read for two attempt times: its first attempt went to the leader the
     * calling follower still knew (killed), the follower became the leader meanwhile, and the attempt
     * beside it went to the member after the client's leader: the killed one again.
     */
    @Test
    void anAttemptBesideOneToADeadLeaderGoesToTheNewLeaderNotToTheDeadOneAgain() {
        assertEquals(N1, GroupRead.besideTarget(MEMBERS, N1, N1, asked(N2)));
        assertEquals(N1, GroupRead.besideTarget(MEMBERS, N2, N1, asked(N2)), "a stale hint already asked");
        assertEquals(N3, GroupRead.besideTarget(MEMBERS, N2, N2, asked(N2)), "the leader asked, unanswered: another member");
    }

    @Test
    void membersAfterTheClientsLeaderInTurnSkippingThoseAsked() {
        assertEquals(N2, GroupRead.besideTarget(MEMBERS, null, N1, asked(N1)));
        assertEquals(N3, GroupRead.besideTarget(MEMBERS, null, N1, asked(N1, N2)));
        assertEquals(N1, GroupRead.besideTarget(MEMBERS, N3, N3, asked(N3, N2)), "wraps around");
        assertEquals(N1, GroupRead.besideTarget(MEMBERS, null, null, asked((RaftPeerId) null)), "no leader known: from the first");
        assertEquals(N2, GroupRead.besideTarget(MEMBERS, null, null, asked(N1)));
    }

    @Test
    void everyMemberAskedGoesToTheNextAfterTheClientsLeader() {
        assertEquals(N3, GroupRead.besideTarget(MEMBERS, N2, N2, asked(N1, N2, N3)));
        assertEquals(N1, GroupRead.besideTarget(MEMBERS, null, null, asked(N1, N2, N3)));
        assertNull(GroupRead.besideTarget(List.of(), null, null, asked()));
    }

    /**
     * A peer removed by a change it never learnt still lists itself, and its client took itself for
     * the leader: every read went there and was refused ("group not found") until the operation
     * timeout, although the remaining member led.
     */
    @Test
    void anAttemptAvoidsAPeerThatSaidItHoldsNoSuchGroup() {
        List<RaftPeerId> two = List.of(N2, N3);
        assertEquals(N3, GroupRead.notGone(null, two, null, N2, asked(), gone(N2)), "the client's leader left");
        assertEquals(N3, GroupRead.notGone(N2, two, N2, N2, asked(), gone(N2)), "so did the hint");
        assertNull(GroupRead.notGone(null, two, null, N3, asked(), gone(N2)), "the client's leader is another");
        assertEquals(N1, GroupRead.notGone(N2, MEMBERS, N2, N3, asked(N3), gone(N2)), "nor one asked");
        assertEquals(N2, GroupRead.notGone(N2, MEMBERS, null, null, asked(), gone()), "none gone: as chosen");
        assertEquals(N2, GroupRead.notGone(N2, two, null, null, asked(N3), gone(N2)), "none left: as chosen");
    }

    /** An attempt beside goes before the attempt time only to a leader this peer learned of since. */
    @Test
    void anAttemptGoesBesideAtOnceOnlyForALeaderNoUnansweredAttemptWentTo() {
        assertTrue(GroupRead.newLeader(N3, asked(N1)), "the leader asked died, n3 leads now");
        assertFalse(GroupRead.newLeader(N1, asked(N1)), "the leader asked still leads: it may just be slow");
        assertFalse(GroupRead.newLeader(null, asked(N1)), "no leader known: an election is on");
        assertFalse(GroupRead.newLeader(N3, asked(N1, N3)), "one went to n3 already");
    }
}
