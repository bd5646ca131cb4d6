"""Everything a person reads: terminal table, JSON, Markdown and HTML reports."""
