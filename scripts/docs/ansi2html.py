#!/usr/bin/env python3
"""Turns a `tmux capture-pane -e -p -N` dump (text with SGR colour codes) into an HTML page
that shows it as a terminal would: one row per line, every cell the same width.

Usage: ansi2html.py CAPTURE.txt OUT.html --cols 140 --rows 42 [--font-px 15] [--title T]
Prints the page size in CSS pixels ("WIDTH HEIGHT") for the screenshot window.
"""

import argparse
import html
import math
import re
import unicodedata

# xterm's 16 colours (the TUI paints RGB colours; these only serve a stray default one).
BASIC = [
    "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
    "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
]
SGR = re.compile(r"\x1b\[([0-9;:]*)m")
# DejaVu Sans Mono: advance 0.602 em, ascent + descent 1.164 em. Rows get a whole number of
# pixels (a fractional height lets one row's background paint over the underscores of the
# row above), and box-drawing glyphs are stretched a little to fill them, so borders meet.
ADVANCE_EM = 0.602
LINE_EM = 1.164
PAD_PX = 10


def xterm256(n):
    if n < 16:
        return BASIC[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (steps[n // 36], steps[n // 6 % 6], steps[n % 6])
    v = 8 + 10 * (n - 232)
    return "#%02x%02x%02x" % (v, v, v)


class Style:
    def __init__(self):
        self.reset()

    def reset(self):
        self.fg = self.bg = None
        self.bold = self.dim = self.italic = self.underline = self.reverse = False

    def key(self):
        return (self.fg, self.bg, self.bold, self.dim, self.italic, self.underline, self.reverse)

    def apply(self, params):
        tokens = params.split(";") if params else ["0"]
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if ":" in token:  # `38:2::r:g:b` or `38:5:n`, one token
                sub = [int(p) if p else 0 for p in token.split(":")]
                if sub[0] in (38, 48) and len(sub) >= 3:
                    colour = xterm256(sub[2]) if sub[1] == 5 else "#%02x%02x%02x" % tuple(sub[-3:])
                    self.set_colour(sub[0], colour)
                i += 1
                continue
            c = int(token) if token else 0
            if c in (38, 48) and i + 1 < len(tokens):  # `38;5;n` or `38;2;r;g;b`
                mode = int(tokens[i + 1] or 0)
                if mode == 5 and i + 2 < len(tokens):
                    self.set_colour(c, xterm256(int(tokens[i + 2])))
                    i += 3
                elif mode == 2 and i + 4 < len(tokens):
                    rgb = tuple(int(t or 0) for t in tokens[i + 2 : i + 5])
                    self.set_colour(c, "#%02x%02x%02x" % rgb)
                    i += 5
                else:
                    i += 2
                continue
            self.apply_one(c)
            i += 1

    def set_colour(self, which, colour):
        if which == 38:
            self.fg = colour
        else:
            self.bg = colour

    def apply_one(self, c):
        if c == 0:
            self.reset()
        elif c == 1:
            self.bold = True
        elif c == 2:
            self.dim = True
        elif c == 3:
            self.italic = True
        elif c == 4:
            self.underline = True
        elif c == 7:
            self.reverse = True
        elif c == 22:
            self.bold = self.dim = False
        elif c == 23:
            self.italic = False
        elif c == 24:
            self.underline = False
        elif c == 27:
            self.reverse = False
        elif 30 <= c <= 37:
            self.fg = BASIC[c - 30]
        elif 90 <= c <= 97:
            self.fg = BASIC[c - 90 + 8]
        elif 40 <= c <= 47:
            self.bg = BASIC[c - 40]
        elif 100 <= c <= 107:
            self.bg = BASIC[c - 100 + 8]
        elif c == 39:
            self.fg = None
        elif c == 49:
            self.bg = None

    def css(self, default_fg, default_bg):
        fg, bg = self.fg or default_fg, self.bg or default_bg
        if self.reverse:
            fg, bg = bg, fg
        parts = ["color:" + fg, "background:" + bg]
        if self.bold:
            parts.append("font-weight:bold")
        if self.dim:
            parts.append("opacity:0.7")
        if self.italic:
            parts.append("font-style:italic")
        if self.underline:
            parts.append("text-decoration:underline")
        return ";".join(parts)


def cell_width(ch):
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def render_line(line, cols, default_fg, default_bg):
    """One row as HTML; non-ASCII cells sit in fixed-width boxes, so a glyph from a fallback
    font cannot push the rest of the row out of its column."""
    style = Style()
    out, used = [], 0
    pos = 0
    runs = []  # (style css, text)
    for m in SGR.finditer(line):
        if m.start() > pos:
            runs.append((style.css(default_fg, default_bg), line[pos : m.start()]))
        style.apply(m.group(1))
        pos = m.end()
    if pos < len(line):
        runs.append((style.css(default_fg, default_bg), line[pos:]))
    for css, text in runs:
        pieces = []
        for ch in text:
            if ch < " " or used >= cols:
                continue
            w = cell_width(ch)
            used += w
            if ch.isascii():
                pieces.append(html.escape(ch))
            elif "\u2500" <= ch <= "\u259f":
                pieces.append('<i class="c1 b">%s</i>' % html.escape(ch))
            else:
                pieces.append('<i class="c%d">%s</i>' % (w, html.escape(ch)))
        if pieces:
            out.append('<span style="%s">%s</span>' % (css, "".join(pieces)))
    if used < cols:
        out.append('<span style="background:%s">%s</span>' % (default_bg, " " * (cols - used)))
    return "".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("out")
    ap.add_argument("--cols", type=int, required=True)
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--font-px", type=float, default=15)
    ap.add_argument("--fg", default="#d0d0d0")
    ap.add_argument("--bg", default="#1f242d")
    ap.add_argument("--title", default="coret-tui")
    args = ap.parse_args()

    with open(args.capture, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")[: args.rows]
    lines += [""] * (args.rows - len(lines))
    rows = "\n".join(render_line(l, args.cols, args.fg, args.bg) for l in lines)
    cell_w = args.font_px * ADVANCE_EM
    line_h = math.ceil(args.font_px * LINE_EM)
    stretch = line_h / (args.font_px * LINE_EM) + 0.02
    width = round(args.cols * cell_w + 2 * PAD_PX)
    height = round(args.rows * line_h + 2 * PAD_PX)
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(args.title)}</title>
<style>
html, body {{ margin: 0; padding: 0; background: {args.bg}; }}
pre {{ margin: 0; padding: {PAD_PX}px; font-family: 'DejaVu Sans Mono', monospace;
      font-size: {args.font_px}px; line-height: {line_h}px; color: {args.fg};
      font-variant-ligatures: none; }}
i {{ font-style: inherit; display: inline-block; text-align: center; overflow: visible;
     height: {line_h}px; vertical-align: top; }}
i.c1 {{ width: {cell_w:.3f}px; }}
i.c2 {{ width: {2 * cell_w:.3f}px; }}
i.b {{ transform: scaleY({stretch:.3f}); }}
</style></head>
<body><pre>{rows}</pre></body></html>
"""
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(page)
    print(width, height)


if __name__ == "__main__":
    main()
