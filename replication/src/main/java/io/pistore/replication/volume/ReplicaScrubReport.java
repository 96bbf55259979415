package io.pistore.replication.volume;

import java.util.Map;

/** What a scrub of every replica found and did. */
public final class ReplicaScrubReport {
    /** Blocks checked on every replica reached. */
    public long blocks;
    /** Failing copies found, by replica id. */
    public final Map<String, Long> badCopies = new java.util.TreeMap<>();
    /** Failing copies rewritten from a good replica's copy. */
    public long repairedCopies;
    /** Blocks with no good copy on any replica reached: reported, never "repaired". */
    public final java.util.List<Long> unrepairable = new java.util.ArrayList<>();
    /** Replicas that could not be read, with the reason; their copies went unchecked. */
    public final Map<String, String> unreachable = new java.util.TreeMap<>();

    public boolean clean() {
        return badCopies.isEmpty() && unreachable.isEmpty();
    }

    /** The line a scrub ends with, naming at most {@code maxLbas} of the blocks bad on every replica. */
    public String summary(io.pistore.integrity.BlockFormat format, java.util.List<String> replicas, long maxLbas) {
        StringBuilder bad = new StringBuilder();
        badCopies.forEach((id, n) -> bad.append(bad.length() == 0 ? "" : " ").append(id).append('=').append(n));
        return "checked " + blocks + " blocks (" + format + ") on " + replicas.size() + " replicas (" + String.join(",",
                replicas) + "): " + (bad.length() == 0 ? "no bad copies" : "bad copies " + bad) + ", " + repairedCopies
                + " rewritten, " + unrepairable.size() + " bad on every replica" + (unrepairable.isEmpty() ? ""
                : " (lba " + unrepairable.stream().limit(maxLbas).map(String::valueOf)
                .collect(java.util.stream.Collectors.joining(", ")) + ")");
    }
}
