package dev.agentjail.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Which names (MCP tools, resources, prompts) are approved: a name must match an {@code allow}
 * pattern, an entry of every list in {@code narrowedBy}, and no {@code deny} pattern. A pattern is a
 * literal name in which {@code *} matches any run of characters. Nothing is approved unless an allow
 * pattern says so. {@code narrowedBy} holds the allow lists of other policy entries for the same
 * server: several entries can only narrow one another, never add up ({@link #narrowedBy(NameFilter)}).
 */
public record NameFilter(List<String> allow, List<String> deny, List<List<String>> narrowedBy) {
    public NameFilter {
        allow = List.copyOf(allow);
        deny = List.copyOf(deny);
        narrowedBy = narrowedBy.stream().map(List::copyOf).toList();
        for (String pattern : allow) {
            check(pattern);
        }
        for (String pattern : deny) {
            check(pattern);
        }
        narrowedBy.forEach(list -> list.forEach(NameFilter::check));
    }

    public NameFilter(List<String> allow, List<String> deny) {
        this(allow, deny, List.of());
    }

    /** Approves nothing. */
    public static NameFilter none() {
        return new NameFilter(List.of(), List.of());
    }

    public boolean permits(String name) {
        return allow.stream().anyMatch(p -> matches(p, name))
                && narrowedBy.stream().allMatch(list -> list.stream().anyMatch(p -> matches(p, name)))
                && deny.stream().noneMatch(p -> matches(p, name));
    }

    /** What both filters approve: this one's allow list, narrowed by {@code other}'s, and both deny lists. */
    public NameFilter narrowedBy(NameFilter other) {
        List<List<String>> lists = new ArrayList<>(narrowedBy);
        lists.add(other.allow);
        lists.addAll(other.narrowedBy);
        List<String> denies = new ArrayList<>(deny);
        other.deny.stream().filter(p -> !denies.contains(p)).forEach(denies::add);
        return new NameFilter(allow, denies, lists);
    }

    /** The first deny pattern that matches, if any; for error messages and records. */
    public Optional<String> deniedBy(String name) {
        return deny.stream().filter(p -> matches(p, name)).findFirst();
    }

    static Optional<String> patternProblem(String pattern) {
        if (pattern.isEmpty()) {
            return Optional.of("empty pattern");
        }
        if (Quoting.hasControl(pattern)) {
            return Optional.of("control characters are not allowed");
        }
        return Optional.empty();
    }

    private static void check(String pattern) {
        patternProblem(pattern).ifPresent(problem -> {
            throw new IllegalArgumentException(problem);
        });
    }

    /** Glob match with {@code *} only, iterative so no input can make it slow. */
    static boolean matches(String pattern, String name) {
        int p = 0;
        int n = 0;
        int star = -1;
        int mark = 0;
        while (n < name.length()) {
            if (p < pattern.length() && pattern.charAt(p) != '*' && pattern.charAt(p) == name.charAt(n)) {
                p++;
                n++;
            } else if (p < pattern.length() && pattern.charAt(p) == '*') {
                star = p++;
                mark = n;
            } else if (star >= 0) {
                p = star + 1;
                n = ++mark;
            } else {
                return false;
            }
        }
        while (p < pattern.length() && pattern.charAt(p) == '*') {
            p++;
        }
        return p == pattern.length();
    }
}
