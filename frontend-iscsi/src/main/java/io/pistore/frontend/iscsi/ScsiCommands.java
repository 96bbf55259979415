package io.pistore.frontend.iscsi;

import java.io.ByteArrayOutputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The commands a logical unit executes: one table that both dispatches a CDB to its code and
 * answers REPORT SUPPORTED OPERATION CODES (SPC-4 6.35, MAINTENANCE IN service action 0Ch), so what
 * the unit reports is exactly what it runs. Each row is an operation code, its service action (for
 * the opcodes that have them), whether the unit's protection type lets it run at all (the 32-byte
 * CDBs serve Type 2 only, SBC-3), its CDB usage data (the length of the CDB and the bits the unit
 * reads; byte 0 is the opcode), and the code that runs it. DPO is read and has no effect: the
 * unit keeps no cache that a block could be left out of (the mode header says DPOFUA).
 */
final class ScsiCommands {
    /** Runs one command of a logical unit for an I_T nexus. */
    interface Handler {
        ScsiResult run(ScsiLun lun, String nexus, byte[] cdb, byte[] dataOut);
    }

    /** One supported command; {@code serviceAction} -1 for an opcode without service actions. */
    record Command(String name, int opcode, int serviceAction, boolean type2Only, byte[] usage, Handler handler) {
        boolean hasServiceAction() {
            return serviceAction >= 0;
        }

        boolean supportedBy(ScsiLun lun) {
            return !type2Only || lun.type2();
        }
    }

    static final int MAINTENANCE_IN = 0xA3;
    static final int MAINTENANCE_OUT = 0xA4;
    static final int REPORT_SUPPORTED_OPERATION_CODES = 0x0C;

    private static final Handler READ_WRITE = (lun, nexus, cdb, data) -> lun.readWriteVerify(cdb, data);
    private static final Handler PREFETCH = (lun, nexus, cdb, data) -> ScsiHintCommands.prefetch(cdb, lun.blockCount());
    private static final Handler DEFECT_DATA = (lun, nexus, cdb, data) -> ScsiHintCommands.defectData(cdb);

    /** Every supported command, in opcode order. */
    static final List<Command> ALL = List.of(
            cmd("TEST UNIT READY", 0x00, -1, "00 00 00 00 00", (lun, n, c, d) -> ScsiResult.good()),
            cmd("REQUEST SENSE", 0x03, -1, "01 00 00 ff 00", (lun, n, c, d) -> lun.requestSense(n, c)),
            cmd("READ(6)", 0x08, -1, "1f ff ff ff 00", READ_WRITE),
            cmd("WRITE(6)", 0x0A, -1, "1f ff ff ff 00", READ_WRITE),
            cmd("INQUIRY", 0x12, -1, "01 ff ff ff 00", (lun, n, c, d) -> lun.inquiry(c)),
            cmd("MODE SELECT(6)", 0x15, -1, "11 00 00 ff 00", (lun, n, c, d) -> lun.modeSelect(c, d)),
            cmd("RESERVE(6)", 0x16, -1, "00 00 00 00 00", (lun, n, c, d) -> lun.reservations().reserveSpc2(n, c)),
            cmd("RELEASE(6)", 0x17, -1, "00 00 00 00 00", (lun, n, c, d) -> lun.reservations().releaseSpc2(n, c)),
            cmd("MODE SENSE(6)", 0x1A, -1, "08 ff ff ff 00", (lun, n, c, d) -> lun.modeSense(c, false)),
            cmd("READ CAPACITY(10)", 0x25, -1, "00 00 00 00 00 00 00 00 00", (lun, n, c, d) -> lun.readCapacity10()),
            cmd("READ(10)", 0x28, -1, "f8 ff ff ff ff 00 ff ff 00", READ_WRITE),
            cmd("WRITE(10)", 0x2A, -1, "f8 ff ff ff ff 00 ff ff 00", READ_WRITE),
            cmd("WRITE AND VERIFY(10)", 0x2E, -1, "f2 ff ff ff ff 00 ff ff 00", READ_WRITE),
            cmd("VERIFY(10)", 0x2F, -1, "f6 ff ff ff ff 00 ff ff 00", READ_WRITE),
            cmd("PRE-FETCH(10)", 0x34, -1, "02 ff ff ff ff 00 ff ff 00", PREFETCH),
            cmd("SYNCHRONIZE CACHE(10)", 0x35, -1, "00 ff ff ff ff 00 ff ff 00",
                    (lun, n, c, d) -> lun.synchronize(Cdb.u32(c, 2), Cdb.u16(c, 7))),
            cmd("READ DEFECT DATA(10)", 0x37, -1, "00 1f 00 00 00 00 ff ff 00", DEFECT_DATA),
            cmd("WRITE SAME(10)", 0x41, -1, "f8 ff ff ff ff 00 ff ff 00", (lun, n, c, d) -> lun.provision(c, d)),
            cmd("UNMAP", 0x42, -1, "00 00 00 00 00 00 ff ff 00", (lun, n, c, d) -> lun.provision(c, d)),
            cmd("MODE SELECT(10)", 0x55, -1, "11 00 00 00 00 00 ff ff 00", (lun, n, c, d) -> lun.modeSelect(c, d)),
            cmd("RESERVE(10)", 0x56, -1, "12 00 00 00 00 00 00 00 00",
                    (lun, n, c, d) -> lun.reservations().reserveSpc2(n, c)),
            cmd("RELEASE(10)", 0x57, -1, "12 00 00 00 00 00 00 00 00",
                    (lun, n, c, d) -> lun.reservations().releaseSpc2(n, c)),
            cmd("MODE SENSE(10)", 0x5A, -1, "08 ff ff 00 00 00 ff ff 00", (lun, n, c, d) -> lun.modeSense(c, true)),
            prIn("READ KEYS", 0x00),
            prIn("READ RESERVATION", 0x01),
            prIn("REPORT CAPABILITIES", 0x02),
            prIn("READ FULL STATUS", 0x03),
            prOut("REGISTER", 0x00),
            prOut("RESERVE", 0x01),
            prOut("RELEASE", 0x02),
            prOut("CLEAR", 0x03),
            prOut("PREEMPT", 0x04),
            prOut("PREEMPT AND ABORT", 0x05),
            prOut("REGISTER AND IGNORE EXISTING KEY", 0x06),
            prOut("REGISTER AND MOVE", 0x07),
            variable("READ(32)", Cdb.READ_32, "f8"),
            variable("VERIFY(32)", Cdb.VERIFY_32, "f6"),
            variable("WRITE(32)", Cdb.WRITE_32, "f8"),
            cmd("EXTENDED COPY(LID1)", ScsiExtendedCopy.EXTENDED_COPY, 0x00, "1f 00 00 00 00 00 00 00 00 ff ff ff ff 00 00",
                    (lun, n, c, d) -> lun.extendedCopy().copy(n, c, d, lun.pages().readOnly())),
            cmd("RECEIVE COPY STATUS(LID1)", ScsiExtendedCopy.RECEIVE_COPY_RESULTS, ScsiExtendedCopy.COPY_STATUS,
                    "1f ff 00 00 00 00 00 00 00 ff ff ff ff 00 00", (lun, n, c, d) -> lun.extendedCopy().results(n, c)),
            cmd("RECEIVE COPY OPERATING PARAMETERS", ScsiExtendedCopy.RECEIVE_COPY_RESULTS, ScsiExtendedCopy.OPERATING_PARAMETERS,
                    "1f 00 00 00 00 00 00 00 00 ff ff ff ff 00 00", (lun, n, c, d) -> lun.extendedCopy().results(n, c)),
            cmd("READ(16)", 0x88, -1, "f8 ff ff ff ff ff ff ff ff ff ff ff ff 00 00", READ_WRITE),
            cmd("COMPARE AND WRITE", 0x89, -1, "f8 ff ff ff ff ff ff ff ff 00 00 00 ff 00 00",
                    (lun, n, c, d) -> lun.compareAndWrite(c, d)),
            cmd("WRITE(16)", 0x8A, -1, "f8 ff ff ff ff ff ff ff ff ff ff ff ff 00 00", READ_WRITE),
            cmd("ORWRITE(16)", ScsiOrWrite.OPCODE, -1, "f8 ff ff ff ff ff ff ff ff ff ff ff ff 00 00",
                    (lun, n, c, d) -> lun.orWrite(c, d)),
            cmd("WRITE AND VERIFY(16)", 0x8E, -1, "f2 ff ff ff ff ff ff ff ff ff ff ff ff 00 00", READ_WRITE),
            cmd("VERIFY(16)", 0x8F, -1, "f6 ff ff ff ff ff ff ff ff ff ff ff ff 00 00", READ_WRITE),
            cmd("PRE-FETCH(16)", 0x90, -1, "02 ff ff ff ff ff ff ff ff ff ff ff ff 00 00", PREFETCH),
            cmd("SYNCHRONIZE CACHE(16)", 0x91, -1, "00 ff ff ff ff ff ff ff ff ff ff ff ff 00 00",
                    (lun, n, c, d) -> lun.synchronize(Pdu.getLong(c, 2), Cdb.u32(c, 10))),
            cmd("WRITE SAME(16)", 0x93, -1, "f9 ff ff ff ff ff ff ff ff ff ff ff ff 00 00",
                    (lun, n, c, d) -> lun.provision(c, d)),
            cmd("WRITE ATOMIC(16)", 0x9C, -1, "f8 ff ff ff ff ff ff ff ff 00 00 ff ff 00 00", READ_WRITE),
            cmd("READ CAPACITY(16)", 0x9E, 0x10, "1f 00 00 00 00 00 00 00 00 ff ff ff ff 00 00",
                    (lun, n, c, d) -> lun.readCapacity16(c)),
            cmd("GET LBA STATUS", 0x9E, 0x12, "1f ff ff ff ff ff ff ff ff ff ff ff ff 00 00",
                    (lun, n, c, d) -> lun.lbaStatus(c)),
            cmd("REPORT LUNS", 0xA0, -1, "00 00 00 00 00 ff ff ff ff 00 00", (lun, n, c, d) -> lun.reportLuns(c)),
            cmd("REPORT TARGET PORT GROUPS", MAINTENANCE_IN, ScsiPortGroups.REPORT_TARGET_PORT_GROUPS,
                    "ff 00 00 00 00 ff ff ff ff 00 00", (lun, n, c, d) -> lun.portGroups().report(c)),
            cmd("REPORT SUPPORTED OPERATION CODES", MAINTENANCE_IN, REPORT_SUPPORTED_OPERATION_CODES,
                    "1f 87 ff ff ff ff ff ff ff 00 00", (lun, n, c, d) -> report(lun, c)),
            cmd("SET TARGET PORT GROUPS", MAINTENANCE_OUT, ScsiPortGroups.SET_TARGET_PORT_GROUPS,
                    "1f 00 00 00 00 ff ff ff ff 00 00", (lun, n, c, d) -> lun.portGroups().set(n, c, d, lun.attentions())),
            cmd("READ(12)", 0xA8, -1, "f8 ff ff ff ff ff ff ff ff 00 00", READ_WRITE),
            cmd("WRITE(12)", 0xAA, -1, "f8 ff ff ff ff ff ff ff ff 00 00", READ_WRITE),
            cmd("WRITE AND VERIFY(12)", 0xAE, -1, "f2 ff ff ff ff ff ff ff ff 00 00", READ_WRITE),
            cmd("VERIFY(12)", 0xAF, -1, "f6 ff ff ff ff ff ff ff ff 00 00", READ_WRITE),
            cmd("READ DEFECT DATA(12)", 0xB7, -1, "1f ff ff ff ff ff ff ff ff 00 00", DEFECT_DATA));

    private static final Map<Integer, Command> BY_CODE = new HashMap<>();
    /** Opcodes whose commands carry a service action: an unknown one is an invalid field, not opcode. */
    private static final boolean[] HAS_SERVICE_ACTIONS = new boolean[256];

    static {
        for (Command c : ALL) {
            if (BY_CODE.put(key(c.opcode, c.serviceAction), c) != null) {
                throw new IllegalStateException("two rows for " + c.name);
            }
            HAS_SERVICE_ACTIONS[c.opcode] |= c.hasServiceAction();
        }
    }

    private ScsiCommands() {
    }

    private static Command cmd(String name, int opcode, int sa, String usage, Handler h) {
        return new Command(name, opcode, sa, false, usage(opcode, usage), h);
    }

    private static Command prIn(String name, int sa) {
        return cmd("PERSISTENT RESERVE IN " + name, 0x5E, sa, "1f 00 00 00 00 00 ff ff 00",
                (lun, n, c, d) -> lun.reservations().in(c));
    }

    private static Command prOut(String name, int sa) {
        return cmd("PERSISTENT RESERVE OUT " + name, 0x5F, sa, "1f ff 00 00 ff ff ff ff 00",
                (lun, n, c, d) -> lun.persistentReserveOut(n, c, d));
    }

    /** A 32-byte CDB (SBC-3 variable length): control byte, reserved, group, length 18h, service action. */
    private static Command variable(String name, int sa, String flags) {
        String usage = "00 00 00 00 00 00 ff ff ff " + flags + " 00" + " ff".repeat(20);
        return new Command(name, Cdb.VARIABLE_LENGTH, sa, true, usage(Cdb.VARIABLE_LENGTH, usage), READ_WRITE);
    }

    private static byte[] usage(int opcode, String rest) {
        String[] hex = rest.trim().split(" +");
        byte[] u = new byte[1 + hex.length];
        u[0] = (byte) opcode;
        for (int i = 0; i < hex.length; i++) {
            u[1 + i] = (byte) Integer.parseInt(hex[i], 16);
        }
        return u;
    }

    private static int key(int opcode, int sa) {
        return opcode << 16 | (sa & 0xFFFF);
    }

    /** The service action a CDB of that opcode carries (0 for opcodes without). */
    static int serviceAction(byte[] cdb) {
        int op = cdb[0] & 0xff;
        if (op == Cdb.VARIABLE_LENGTH) {
            return cdb.length >= 10 ? Cdb.u16(cdb, 8) : -2;
        }
        return cdb[1] & 0x1f;
    }

    /** The row that runs this CDB, or null when the opcode (or its service action) is not supported. */
    static Command find(byte[] cdb) {
        int op = cdb[0] & 0xff;
        return BY_CODE.get(HAS_SERVICE_ACTIONS[op] ? key(op, serviceAction(cdb)) : key(op, -1));
    }

    /**
     * The answer to a CDB no row runs: an opcode with service actions and an unknown one is an
     * invalid field in the CDB, any other an invalid operation code (SPC-4).
     */
    static ScsiResult unsupported(byte[] cdb) {
        return HAS_SERVICE_ACTIONS[cdb[0] & 0xff] ? ScsiResult.invalidField() : ScsiResult.invalidOpcode();
    }

    /**
     * REPORT SUPPORTED OPERATION CODES: REPORTING OPTIONS 000b lists every command the unit runs
     * (with a command timeouts descriptor each when RCTD is set); 001b, 010b and 011b describe one
     * command (SUPPORT 011b with its CDB usage data, or 001b) by opcode, by opcode and service
     * action, or either.
     */
    static ScsiResult report(ScsiLun lun, byte[] cdb) {
        boolean rctd = (cdb[2] & 0x80) != 0;
        int options = cdb[2] & 0x07;
        int op = cdb[3] & 0xff;
        int sa = Cdb.u16(cdb, 4);
        long alloc = Cdb.u32(cdb, 6);
        if (options == 0) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.writeBytes(new byte[4]);
            for (Command c : ALL) {
                if (!c.supportedBy(lun)) {
                    continue;
                }
                byte[] d = new byte[8];
                d[0] = (byte) c.opcode;
                d[2] = (byte) (Math.max(0, c.serviceAction) >>> 8);
                d[3] = (byte) Math.max(0, c.serviceAction);
                d[5] = (byte) ((rctd ? 0x02 : 0) | (c.hasServiceAction() ? 0x01 : 0)); // CTDP, SERVACTV
                d[6] = (byte) (c.usage.length >>> 8);
                d[7] = (byte) c.usage.length;
                out.writeBytes(d);
                if (rctd) {
                    out.writeBytes(timeouts());
                }
            }
            byte[] b = out.toByteArray();
            Pdu.putInt(b, 0, b.length - 4);
            return ScsiResult.cut(b, alloc);
        }
        Command c;
        switch (options) {
            case 1: // by opcode: an opcode with service actions is an invalid field
                if (HAS_SERVICE_ACTIONS[op]) {
                    return ScsiResult.invalidFieldAt(2);
                }
                c = BY_CODE.get(key(op, -1));
                break;
            case 2: // by opcode and service action: an opcode known without them is an invalid field
                if (BY_CODE.containsKey(key(op, -1))) {
                    return ScsiResult.invalidFieldAt(2);
                }
                c = BY_CODE.get(key(op, sa));
                break;
            case 3: // either: the service action counts only for an opcode that has them
                c = HAS_SERVICE_ACTIONS[op] ? BY_CODE.get(key(op, sa)) : sa == 0 ? BY_CODE.get(key(op, -1)) : null;
                break;
            default:
                return ScsiResult.invalidFieldAt(2); // REPORTING OPTIONS
        }
        if (c == null || !c.supportedBy(lun)) {
            byte[] b = new byte[4];
            b[1] = 0x01; // SUPPORT 001b: not supported
            return ScsiResult.cut(b, alloc);
        }
        byte[] b = new byte[4 + c.usage.length + (rctd ? 12 : 0)];
        b[1] = (byte) ((rctd ? 0x80 : 0) | 0x03); // CTDP, SUPPORT 011b: supported as the standard says
        b[2] = (byte) (c.usage.length >>> 8);
        b[3] = (byte) c.usage.length;
        System.arraycopy(c.usage, 0, b, 4, c.usage.length);
        if (rctd) {
            System.arraycopy(timeouts(), 0, b, 4 + c.usage.length, 12);
        }
        return ScsiResult.cut(b, alloc);
    }

    /** A command timeouts descriptor: length 0Ah, no nominal or recommended timeout stated (0). */
    private static byte[] timeouts() {
        byte[] t = new byte[12];
        t[1] = 0x0A;
        return t;
    }
}
