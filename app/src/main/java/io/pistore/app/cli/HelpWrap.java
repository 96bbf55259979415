package io.pistore.app.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.IHelpSectionRenderer;
import picocli.CommandLine.Model.UsageMessageSpec;

/**
 * Usage help wrapped at spaces only. Picocli breaks lines where Java's line {@code BreakIterator}
 * allows, which includes after a {@code .} or {@code :} inside a word: {@code tcp.} / {@code
 * tlsEngine}, {@code http://HOST:} / {@code PORT/metrics}, names a reader then cannot copy. So each
 * section is rendered on one line per paragraph (a width nothing reaches) and wrapped here at
 * {@link #WIDTH} columns, breaking only at spaces; a word longer than a line stays whole.
 */
final class HelpWrap {
    /** The width of the help, as picocli's default. */
    static final int WIDTH = 80;
    /** The furthest a table's first column (an option's or a command's name) starts. */
    private static final int NAME_COLUMN_MAX = 8;
    /** A width no paragraph of the help reaches: picocli wraps nothing. */
    private static final int UNWRAPPED = 10_000;

    private HelpWrap() {
    }

    /** Makes {@code cl} and its subcommands wrap their usage help at spaces only. */
    static void install(CommandLine cl) {
        cl.setUsageHelpWidth(UNWRAPPED);
        Map<String, IHelpSectionRenderer> sections = new LinkedHashMap<>(cl.getHelpSectionMap());
        for (Map.Entry<String, IHelpSectionRenderer> e : sections.entrySet()) {
            IHelpSectionRenderer r = e.getValue();
            String key = e.getKey();
            e.setValue(help -> {
                String text = r.render(help);
                if (key.equals(UsageMessageSpec.SECTION_KEY_SYNOPSIS)) {
                    // after "Usage: ", continued under the first word after the command's name
                    int indent = "Usage: ".length() + help.commandSpec().qualifiedName().length() + 1;
                    return synopsis(text, "Usage: ".length(), indent);
                }
                boolean table = key.equals(UsageMessageSpec.SECTION_KEY_OPTION_LIST)
                        || key.equals(UsageMessageSpec.SECTION_KEY_PARAMETER_LIST)
                        || key.equals(UsageMessageSpec.SECTION_KEY_COMMAND_LIST)
                        || key.equals(UsageMessageSpec.SECTION_KEY_EXIT_CODE_LIST)
                        || key.equals(UsageMessageSpec.SECTION_KEY_END_OF_OPTIONS);
                return wrap(text, table);
            });
        }
        cl.setHelpSectionMap(sections);
    }

    /** {@code text} wrapped: each line continued at its text column (a table's: its second column, plus 2). */
    static String wrap(String text, boolean table) {
        StringBuilder out = new StringBuilder();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            // a line that fits stays as it is (a heading such as "Usage: " ends in its space)
            String line = lines[i].length() <= WIDTH ? lines[i] : lines[i].stripTrailing();
            int start = leading(line);
            int indent = start;
            if (table && start <= NAME_COLUMN_MAX) { // a line that starts with a name, not a description's next line
                int gap = line.indexOf("  ", start);
                int second = gap < 0 ? -1 : leading(line, gap);
                if (second > 0 && second < line.length()) {
                    start = second;
                }
            }
            if (table) {
                indent = start + 2;
            }
            out.append(fill(line, start, WIDTH, indent));
            if (i < lines.length - 1) {
                out.append('\n');
            }
        }
        return out.toString();
    }

    /** The synopsis: its first line follows {@code offset} columns of heading. */
    static String synopsis(String text, int offset, int indent) {
        StringBuilder out = new StringBuilder();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].stripTrailing();
            if (i == 0) {
                String wrapped = fill(" ".repeat(offset) + line, offset, WIDTH, indent);
                out.append(wrapped.substring(offset));
            } else {
                out.append(fill(line, leading(line), WIDTH, indent));
            }
            if (i < lines.length - 1) {
                out.append('\n');
            }
        }
        return out.toString();
    }

    /**
     * {@code line}, whose first {@code from} columns stay as they are, broken at spaces after them
     * into lines of at most {@code width} columns (a longer word alone), continued at {@code indent}.
     */
    static String fill(String line, int from, int width, int indent) {
        if (line.length() <= width || from >= line.length()) {
            return line;
        }
        StringBuilder out = new StringBuilder(line.substring(0, from));
        int col = from;
        boolean first = true;
        for (String word : line.substring(from).split(" +")) {
            if (word.isEmpty()) {
                continue;
            }
            if (!first && col + 1 + word.length() > width) {
                out.append('\n').append(" ".repeat(indent));
                col = indent;
                first = true;
            }
            if (!first) {
                out.append(' ');
                col++;
            }
            out.append(word);
            col += word.length();
            first = false;
        }
        return out.toString();
    }

    private static int leading(String line) {
        return leading(line, 0);
    }

    private static int leading(String line, int from) {
        int i = from;
        while (i < line.length() && line.charAt(i) == ' ') {
            i++;
        }
        return i;
    }
}
