package io.pistore.app.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

/** CPU time of this process, so that a bench can say what its requests cost besides wall time. */
final class ProcessCpu {
    private ProcessCpu() {
    }

    /** CPU nanoseconds used by this process so far (all threads, user and system), or -1 if unknown. */
    static long nanos() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return -1;
    }
}
