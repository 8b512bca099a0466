"""Go's standard library where the API server's words and verdicts come from it: values printed
as Go prints them (`printing`), the parsers its string formats call (`parsing`), and its regexp
(`regexp`)."""
