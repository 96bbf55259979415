package io.pistore.app.cli;

import io.pistore.app.cli.pi.PiCommand;
import io.pistore.app.cli.bench.BenchCommand;
import io.pistore.app.cli.replicas.ReplicasCommand;
import io.pistore.app.cli.volume.ScrubCommand;
import io.pistore.app.cli.volume.StatsCommand;
import io.pistore.app.cli.volume.VolumeCommand;
import io.pistore.app.cli.serve.ServeCommand;
import io.pistore.app.cli.serve.ServeDaemon;
import io.pistore.app.cli.serve.StopCommand;
import io.pistore.integrity.GuardPath;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * The {@code pistore} command. Each job is a subcommand class listed in {@link #SUBCOMMANDS}; a new
 * one (serve, bench, volume, scrub) is a {@code Callable<Integer>} annotated with {@code @Command}
 * and added there. A command line whose first word names a subcommand builds that subcommand's
 * model only (picocli reads every option of every class it is given, most of a short command's
 * start-up); any other (no subcommand, {@code help}, an option, an unknown word) builds them all. Commands return an {@link ExitCodes} value; they report bad arguments by throwing
 * {@link CliException} (or picocli's {@link ParameterException}), which prints one line on stderr.
 */
@Command(name = "pistore", scope = ScopeType.INHERIT, mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class, sortOptions = false,
        description = "A block-storage engine with end-to-end T10/NVMe Protection Information.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:done; for checks, every block passed; a server stopped by SIGTERM or SIGINT",
            "1:a PI check found bad blocks",
            "2:bad arguments or unusable files",
            "3:an I/O error, a target or peer unreachable, or an internal failure"})
public final class Main implements Callable<Integer> {
    /** The subcommands, in the order the usage help lists them. */
    private static final java.util.List<Class<?>> SUBCOMMANDS = java.util.List.of(ServeCommand.class,
            StatsCommand.class, BenchCommand.class, VolumeCommand.class, ScrubCommand.class, ReplicasCommand.class,
            StopCommand.class, PiCommand.class, TransportsCommand.class, VersionCommand.class, HelpCommand.class);

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        // Log records (transports' warnings about bad peers, say) on one line each, shaped like serve's own.
        ServerLog.installLineFormat();
        ServeDaemon.launchedFromMain();
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        int code = run(out, err, args);
        out.flush();
        err.flush();
        System.exit(code);
    }

    /** Runs one command line with the given writers; returns the exit code. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        int code;
        try {
            code = commandLine(out, err, args).execute(args);
        } catch (CliException e) {
            err.println("pistore: " + oneLine(e.getMessage()));
            code = e.exitCode();
        }
        out.flush();
        err.flush();
        return code;
    }

    /** The configured command line: writers, one-line errors, exit codes. */
    public static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        return commandLine(out, err, new String[0]);
    }

    /**
     * The configured command line; a {@code --config FILE} among {@code args} supplies defaults for
     * the options (keys are long option names without dashes).
     */
    public static CommandLine commandLine(PrintWriter out, PrintWriter err, String[] args) {
        CommandLine cl = new CommandLine(new Main());
        Class<?> only = subcommandNamed(args.length == 0 ? null : args[0]);
        for (Class<?> c : SUBCOMMANDS) {
            if (only == null || c == only) {
                cl.addSubcommand(c);
            }
        }
        Properties config = configFrom(args);
        if (config != null) {
            cl.setDefaultValueProvider(new CommandLine.PropertiesDefaultProvider(config));
            cl.setExecutionStrategy(parsed -> {
                ConfigKeyWarnings.warn(config, parsed);
                return new CommandLine.RunLast().execute(parsed);
            });
        }
        cl.setOut(out);
        cl.setErr(err);
        HelpWrap.install(cl);
        // the table is about the commands; help's own usage does not repeat it
        if (cl.getSubcommands().containsKey("help")) {
            cl.getSubcommands().get("help").getCommandSpec().usageMessage().exitCodeListHeading("")
                    .exitCodeList(java.util.Map.of());
        }
        cl.setParameterExceptionHandler(Main::parameterError);
        cl.setExecutionExceptionHandler(Main::executionError);
        return cl;
    }

    /** The subcommand class whose name or alias is {@code word}, or null (help needs them all). */
    private static Class<?> subcommandNamed(String word) {
        if (word == null || word.equals("help")) {
            return null;
        }
        for (Class<?> c : SUBCOMMANDS) {
            Command command = c.getAnnotation(Command.class);
            if (command.name().equals(word) || java.util.Arrays.asList(command.aliases()).contains(word)) {
                return c;
            }
        }
        return null;
    }

    /** The properties of the first {@code --config FILE} in {@code args}, or null when there is none. */
    static Properties configFrom(String[] args) {
        String file = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--config") && i + 1 < args.length) {
                file = args[i + 1];
                break;
            }
            if (args[i].startsWith("--config=")) {
                file = args[i].substring("--config=".length());
                break;
            }
        }
        return file == null ? null : readConfig(file);
    }

    /** The properties of config file {@code file}, or a usage error saying why it cannot be read. */
    static Properties readConfig(String file) {
        Properties p = new Properties();
        try (InputStream in = java.nio.file.Files.newInputStream(java.nio.file.Path.of(file))) {
            p.load(in);
        } catch (NoSuchFileException e) {
            throw CliException.usage("cannot read config " + file + ": no such file");
        } catch (AccessDeniedException e) {
            throw CliException.usage("cannot read config " + file + ": permission denied");
        } catch (IOException | RuntimeException e) {
            throw CliException.usage("cannot read config " + file + ": " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : " " + oneLine(e.getMessage())));
        }
        return p;
    }

    /** Without a subcommand: the usage on stderr, and a usage exit. */
    @Override
    public Integer call() {
        return missingSubcommand(spec);
    }

    public static int missingSubcommand(CommandSpec spec) {
        CommandLine cl = spec.commandLine();
        cl.usage(cl.getErr());
        return ExitCodes.USAGE;
    }

    private static int parameterError(ParameterException ex, String[] args) {
        CommandLine cl = ex.getCommandLine();
        String name = cl.getCommandSpec().qualifiedName();
        String message = ex instanceof CommandLine.UnmatchedArgumentException u ? unmatched(u, cl) : null;
        cl.getErr().println(name + ": " + (message != null ? message : oneLine(ex.getMessage()))
                + " (see '" + name + " --help')");
        cl.getErr().flush();
        return ExitCodes.USAGE;
    }

    /**
     * An unknown word or option, named, with the valid ones: {@code unknown command 'x' (commands:
     * ...)}, {@code unknown option '--x' (options: ...)}; null for other unmatched arguments.
     */
    static String unmatched(CommandLine.UnmatchedArgumentException u, CommandLine cl) {
        java.util.List<String> words = u.getUnmatched();
        if (words.isEmpty()) {
            return null;
        }
        String w = words.get(0);
        CommandSpec s = cl.getCommandSpec();
        if (w.startsWith("-") && !w.equals("-")) {
            java.util.List<String> options = new java.util.ArrayList<>();
            for (CommandLine.Model.OptionSpec o : s.options()) {
                if (!o.hidden()) {
                    options.add(o.longestName());
                }
            }
            return "unknown option '" + w + "' (options: " + String.join(", ", options) + ")";
        }
        if (!s.subcommands().isEmpty() && s.positionalParameters().isEmpty()) {
            java.util.Set<String> names = new java.util.LinkedHashSet<>();
            s.subcommands().values().forEach(c -> names.add(c.getCommandName()));
            return "unknown command '" + w + "' (commands: " + String.join(", ", names) + ")";
        }
        return "unexpected argument '" + w + "'";
    }

    private static int executionError(Exception ex, CommandLine cl, ParseResult parsed) {
        String name = cl.getCommandSpec().qualifiedName();
        PrintWriter err = cl.getErr();
        int code;
        if (ex instanceof CliException) {
            err.println(name + ": " + oneLine(ex.getMessage()));
            code = ((CliException) ex).exitCode();
        } else if (ex instanceof IOException || ex instanceof UncheckedIOException) {
            IOException io = ex instanceof IOException ? (IOException) ex : ((UncheckedIOException) ex).getCause();
            if (io instanceof AccessDeniedException) { // unusable files, not an I/O error
                err.println(name + ": " + PermissionProblem.describe(java.nio.file.Path.of(((AccessDeniedException) io).getFile())));
                code = ExitCodes.USAGE;
            } else {
                err.println(name + ": I/O error: " + describe(io));
                code = ExitCodes.FAILURE;
            }
        } else {
            err.println(name + ": internal error: " + oneLine(String.valueOf(ex))
                    + " (run with -Dpistore.debug=true for the stack trace)");
            code = ExitCodes.FAILURE;
        }
        if (Boolean.getBoolean("pistore.debug")) {
            ex.printStackTrace(err);
        }
        err.flush();
        return code;
    }

    private static String describe(IOException e) {
        if (e instanceof NoSuchFileException) {
            return ((NoSuchFileException) e).getFile() + ": no such file";
        }
        if (e instanceof AccessDeniedException) {
            return ((AccessDeniedException) e).getFile() + ": permission denied";
        }
        if (e instanceof FileSystemException) {
            FileSystemException f = (FileSystemException) e;
            return f.getFile() + ": " + (f.getReason() != null ? f.getReason() : e.getClass().getSimpleName());
        }
        return oneLine(e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName());
    }

    private static String oneLine(String s) {
        String l = s == null ? "" : s.strip().replaceAll("\\s*[\\r\\n]+\\s*", "; ");
        // a library's message may carry whole records (Ratis's log entries): the line stays readable
        return l.length() <= 600 ? l : l.substring(0, 600) + "... (" + (l.length() - 600) + " characters more)";
    }

    /** The version of the build, from a resource Maven fills in. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            // the second line says which guard path (native or pure Java) this process uses, and why
            return new String[] {"pistore " + version(), GuardPath.describe()};
        }

        static String version() {
            Properties p = new Properties();
            try (InputStream in = Main.class.getResourceAsStream("/io/pistore/app/version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            } catch (IOException e) {
                // fall through to "unknown"
            }
            return p.getProperty("version", "unknown");
        }
    }
}
