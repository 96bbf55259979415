package io.pistore.testkit;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks a recorded history of reads and writes against a set of registers (each block one
 * register, starting at 0), the Wing-Gong search as Knossos and Porcupine run it: per register
 * (registers are independent, so the check splits), a depth-first search for an order of the
 * operations that respects real time (an operation can come next only if no other remaining one
 * completed before it was invoked) and the register's semantics (a read returns the last value
 * written), with every visited state (operations done, register value) remembered so no state is
 * searched twice. A write whose outcome is unknown (it failed or timed out) may take effect at any
 * time after its invocation, or never; a read that failed tells nothing and is left out.
 *
 * <p>When a register's history is not linearizable, the anomaly reported is the shortest prefix
 * (operations invoked by some instant, those still running then counted as unknown) that is
 * not, found by bisection: every prefix of a linearizable history is linearizable.
 */
public final class LinearizabilityChecker {
    /** Completion time of an operation whose outcome is unknown. */
    public static final long UNKNOWN = Long.MAX_VALUE;

    /** One operation: {@code value} is what a write wrote or a read returned. */
    public record Op(int client, long register, boolean write, long value, long invoked, long completed) {
        public static Op write(int client, long register, long value, long invoked, long completed) {
            return new Op(client, register, true, value, invoked, completed);
        }

        public static Op read(int client, long register, long value, long invoked, long completed) {
            return new Op(client, register, false, value, invoked, completed);
        }

        @Override
        public String toString() {
            return "client " + client + " " + (write ? "write " : "read ") + register + "=" + value + " ["
                    + invoked + ", " + (completed == UNKNOWN ? "unknown" : Long.toString(completed)) + "]";
        }
    }

    /** The verdict: null anomaly when linearizable. */
    public record Result(int operations, int registers, String anomaly) {
        public boolean linearizable() {
            return anomaly == null;
        }
    }

    private LinearizabilityChecker() {
    }

    public static Result check(List<Op> history) {
        Map<Long, List<Op>> byRegister = new TreeMap<>();
        for (Op o : history) {
            byRegister.computeIfAbsent(o.register(), r -> new ArrayList<>()).add(o);
        }
        for (Map.Entry<Long, List<Op>> e : byRegister.entrySet()) {
            if (!linearizable(e.getValue())) {
                return new Result(history.size(), byRegister.size(), "register " + e.getKey() + ": "
                        + smallestAnomaly(e.getValue()));
            }
        }
        return new Result(history.size(), byRegister.size(), null);
    }

    /** Whether one register's operations (starting from 0) have a linearization. */
    public static boolean linearizable(List<Op> ops) {
        List<Op> h = new ArrayList<>(ops);
        h.sort(Comparator.comparingLong(Op::invoked));
        int n = h.size();
        int required = 0;
        for (Op o : h) {
            if (o.completed() != UNKNOWN) {
                required++;
            }
        }
        // Depth-first over states, each state a set of done operations and the register's value.
        record State(BitSet done, long value, int doneRequired) {
        }
        Set<State> seen = new HashSet<>();
        List<State> stack = new ArrayList<>();
        State first = new State(new BitSet(n), 0, 0);
        stack.add(first);
        seen.add(first);
        while (!stack.isEmpty()) {
            State s = stack.remove(stack.size() - 1);
            if (s.doneRequired() == required) {
                return true;
            }
            // The earliest completion among the remaining operations bounds which may go next.
            long bound = UNKNOWN;
            for (int i = s.done().nextClearBit(0); i < n; i = s.done().nextClearBit(i + 1)) {
                Op o = h.get(i);
                if (o.invoked() > bound) {
                    break; // sorted by invocation: none after this one can go next either
                }
                bound = Math.min(bound, o.completed());
            }
            for (int i = s.done().nextClearBit(0); i < n; i = s.done().nextClearBit(i + 1)) {
                Op o = h.get(i);
                if (o.invoked() > bound) {
                    break;
                }
                if (!o.write() && o.value() != s.value()) {
                    continue;
                }
                BitSet d = (BitSet) s.done().clone();
                d.set(i);
                State next = new State(d, o.write() ? o.value() : s.value(),
                        s.doneRequired() + (o.completed() != UNKNOWN ? 1 : 0));
                if (seen.add(next)) {
                    stack.add(next);
                }
            }
        }
        return false;
    }

    /** The shortest failing prefix of a register's operations, as lines. */
    private static String smallestAnomaly(List<Op> ops) {
        List<Long> instants = new ArrayList<>();
        for (Op o : ops) {
            instants.add(o.invoked());
            if (o.completed() != UNKNOWN) {
                instants.add(o.completed());
            }
        }
        instants.sort(null);
        int lo = 0;
        int hi = instants.size() - 1; // the prefix up to and including instants[hi] is the whole history: fails
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (linearizable(prefix(ops, instants.get(mid)))) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        List<Op> p = prefix(ops, instants.get(lo));
        p.sort(Comparator.comparingLong(Op::invoked));
        StringBuilder b = new StringBuilder("not linearizable; shortest failing prefix, " + p.size() + " operations");
        int from = Math.max(0, p.size() - 12);
        if (from > 0) {
            b.append(" (last 12)");
        }
        for (Op o : p.subList(from, p.size())) {
            b.append("\n  ").append(o);
        }
        return b.toString();
    }

    /** The operations invoked at or before {@code t}; those not complete by then count as unknown (reads left out). */
    private static List<Op> prefix(List<Op> ops, long t) {
        List<Op> p = new ArrayList<>();
        for (Op o : ops) {
            if (o.invoked() > t) {
                continue;
            }
            if (o.completed() != UNKNOWN && o.completed() <= t) {
                p.add(o);
            } else if (o.write()) {
                p.add(new Op(o.client(), o.register(), true, o.value(), o.invoked(), UNKNOWN));
            }
        }
        return p;
    }
}
