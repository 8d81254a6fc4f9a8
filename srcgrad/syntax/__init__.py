"""Compile-time syntax utilities (layer 1: gast and srcgrad.errors only): AST helpers,
the namer, node annotations and templates."""
