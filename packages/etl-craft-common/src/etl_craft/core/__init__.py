"""Pure building blocks: errors, enums, actors, time, graph, cron and text helpers."""
