package dev.agentjail.policy;

import java.util.List;

/** A built-in agent preset. (Placeholder: the presets work replaces this file.) */
public record Preset(String name, String description, List<String> binaries, String yaml) {}
