"""A small Markdown-to-HTML converter for the report's errata (no dependency for one page)."""
from __future__ import annotations

import html
import re
from typing import Callable


def _e(x) -> str:
    return html.escape(str(x), quote=True)


_MD_META = re.compile(r"([\\`*_\[\]{}()#+!|~])")


def md_text(x) -> str:
    """Text read from a results directory or raised by experiment code, as inert Markdown: HTML
    escaped, Markdown's markup characters backslash-escaped, on one line (a table cell)."""
    one_line = " ".join(str(x).split())
    return _MD_META.sub(r"\\\1", html.escape(one_line, quote=False))


# ---------------------------------------------------------------------------------------------
# Markdown (a small subset: headings, paragraphs, nested lists, tables, code, bold, links)
# ---------------------------------------------------------------------------------------------

_ITEM = re.compile(r"^(\s*)([-*]|\d+\.)\s+(.*)$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _inline_text(s: str, refs: Callable[[str], str] | None) -> str:
    s = html.escape(s, quote=False)
    s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
    s = re.sub(r"\[([^\]]+)\]\(((?:https?://|\.{0,2}/|#)[^)\s]*)\)",
               lambda m: f'<a href="{m.group(2)}">{m.group(1)}</a>', s)
    return refs(s) if refs else s


def _inline(text: str, code: Callable[[str], str] | None = None,
            refs: Callable[[str], str] | None = None) -> str:
    parts = text.split("`")
    if len(parts) % 2 == 0:       # an unmatched backtick is literal
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(code(part) if code else f"<code>{_e(part)}</code>")
        else:
            out.append(_inline_text(part, refs))
    return "".join(out)


def _parse_list(lines: list[str], i: int) -> tuple[list[list], int]:
    items: list[list] = []
    while i < len(lines):
        line = lines[i]
        m = _ITEM.match(line)
        if m:
            items.append([len(m.group(1).expandtabs()), m.group(2)[0].isdigit(), m.group(3)])
        elif not line.strip():
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if not (_ITEM.match(nxt) or (nxt.startswith("  ") and nxt.strip())):
                break
        elif line.startswith("#") or line.lstrip().startswith("|"):
            break
        else:                      # continuation of the last item
            items[-1][2] += " " + line.strip()
        i += 1
    return items, i


def _render_list(items: list[list], inline: Callable[[str], str]) -> str:
    out, stack = [], []            # stack of (indent, tag) of the open lists
    for indent, ordered, text in items:
        tag = "ol" if ordered else "ul"
        if not stack or indent > stack[-1][0]:
            out.append(f"<{tag}>")
            stack.append((indent, tag))
        else:
            while len(stack) > 1 and indent < stack[-1][0]:
                out.append(f"</li></{stack.pop()[1]}>")
            out.append("</li>")
        out.append(f"<li>{inline(text)}")
    while stack:
        out.append(f"</li></{stack.pop()[1]}>")
    return "".join(out)


def _split_row(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [c.strip() for c in line.split("|")]


def markdown_to_html(text: str, *, code: Callable[[str], str] | None = None,
                     refs: Callable[[str], str] | None = None,
                     heading_id: Callable[[str], str | None] | None = None,
                     heading_offset: int = 0) -> str:
    """Render the Markdown subset the project's docs use.

    ``code(text)`` renders an inline code span (e.g. linking experiment ids), ``refs(html)``
    post-processes plain text (e.g. linking erratum labels), ``heading_id(text)`` gives a
    heading's id; headings are demoted by ``heading_offset`` levels to nest in the page.
    """
    lines = text.splitlines()
    inline = lambda s: _inline(s, code, refs)  # noqa: E731
    out, para, i = [], [], 0

    def flush() -> None:
        if para:
            out.append(f"<p>{inline(' '.join(para))}</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append(f"<pre><code>{_e(chr(10).join(lines[i + 1:j]))}</code></pre>")
            i = j + 1
            continue
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            flush()
            level = min(6, len(m.group(1)) + heading_offset)
            hid = heading_id(m.group(2)) if heading_id else None
            attr = f' id="{_e(hid)}"' if hid else ""
            out.append(f"<h{level}{attr}>{_inline(m.group(2), None, None)}</h{level}>")
            i += 1
            continue
        if line.lstrip().startswith("|") and i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1]):
            flush()
            head = _split_row(line)
            rows = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(_split_row(lines[i]))
                i += 1
            th = "".join(f"<th>{inline(c)}</th>" for c in head)
            body = "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>"
                           for r in rows)
            out.append(f'<table class="md"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>')
            continue
        if _ITEM.match(line):
            flush()
            items, i = _parse_list(lines, i)
            out.append(_render_list(items, inline))
            continue
        if not line.strip():
            flush()
        else:
            para.append(line.strip())
        i += 1
    flush()
    return "\n".join(out)


