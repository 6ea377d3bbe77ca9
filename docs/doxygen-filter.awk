# Doxygen INPUT_FILTER (see docs/Doxyfile): Tessera's headers document each symbol with plain
# comments right above it (STYLE.md), so this turns them into doc comments on the way into
# Doxygen, leaving the files themselves alone. Line numbers are kept, so warnings point at the
# right line.
#   - the comment block at the top of a file documents the file (\file is appended to it)
#   - `// text` on a line of its own documents what follows it: `/// text`
#   - `int x;  // text` documents the member or enumerator on that line: `int x;  ///< text`
#   - in C headers, `/* text */` blocks become `/** text */` (not `/* ---- section ---- */` rules)
# Code inside #if/#else branches and function bodies passes through unchanged in meaning.

function is_comment_line(s) { return s ~ /^[ \t]*\/\// }

BEGIN { in_head = 1; head_lines = 0; c_head = 0 }

{
  line = $0

  # The file's leading comment block.
  if (in_head) {
    if (NR == 1 && line ~ /^\/\*/) {
      c_head = 1
      in_head = 0
      sub(/^\/\*/, "/**", line)
      if (line ~ /\*\/[ \t]*$/) sub(/\*\/[ \t]*$/, " \\file */", line)
      print line
      next
    }
    if (is_comment_line(line)) {
      head[++head_lines] = line
      next
    }
    in_head = 0
    for (i = 1; i <= head_lines; ++i) {
      text = head[i]
      sub(/^[ \t]*\/\/\/?/, "///", text)
      if (i == head_lines) text = text " \\file"
      print text
    }
  }
  if (c_head == 1) {  # inside the C header's leading /* ... */ block
    if (line ~ /\*\//) {
      sub(/\*\//, "\\file */", line)
      c_head = 2
    }
    print line
    next
  }

  # `// text` alone on a line (not `///`, not a `//!` or `// ---` rule).
  if (line ~ /^[ \t]*\/\/[^\/!-]/ || line ~ /^[ \t]*\/\/$/) {
    sub(/\/\//, "///", line)
    print line
    next
  }

  # `declaration;  // text` or `enumerator,  // text` (no string literal before the comment).
  if (line ~ /[;,][ \t]+\/\/[^\/]/) {
    pos = index(line, "//")
    code = substr(line, 1, pos - 1)
    if (code !~ /"/ && code ~ /[;,][ \t]+$/) {
      print code "///< " substr(line, pos + 3)
      next
    }
  }

  # C headers: `/* text` opening a comment, except `/* ----` section rules.
  if (line ~ /^[ \t]*\/\*[ \t]/ && line !~ /^[ \t]*\/\*[ \t]*-/) {
    sub(/\/\*/, "/**", line)
  }
  print line
}

END {
  for (i = 1; i <= head_lines && in_head; ++i) print head[i]
}
