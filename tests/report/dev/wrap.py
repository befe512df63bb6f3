#!/usr/bin/env python3
"""Wraps a findings JSON into the report page as ms__report_write_html does (lib/report/
report_html.c), reading the style sheet and script from lib/report/ so a change to either shows
without a build: wrap.py REPORT.json PAGE.html [TITLE] [--show ID,ID]. --show (for screenshots of a
page's lower part) hides the title, verdicts and every section but those named."""
import os
import sys

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "lib", "report")


def main():
    args = sys.argv[1:]
    show = None
    if "--show" in args:
        i = args.index("--show")
        show = args[i + 1].split(",")
        del args[i:i + 2]
    src, dst = args[0], args[1]
    title = args[2] if len(args) > 2 else "memscope report"
    with open(src, encoding="utf-8") as f:
        json_text = f.read()
    json_text = (json_text.replace("</", "<\\/").replace("<!--", "<\\u0021--")
                 .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    with open(os.path.join(LIB, "report_html.css"), encoding="utf-8") as f:
        css = f.read()
    if show:
        css += "header, #verdicts, nav, section { display: none; }\n" + "".join(
            "section#%s { display: block; }\n" % x for x in show)
    with open(os.path.join(LIB, "report_html.js"), encoding="utf-8") as f:
        js = f.read()
    title = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    with open(dst, "w", encoding="utf-8") as f:
        f.write('<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
                '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                "<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n"
                "<noscript><p>This report is drawn by its script: allow scripts for this file to "
                "see it (memscope-report --format text gives the same findings).</p></noscript>\n"
                '<script type="application/json" id="report">%s</script>\n'
                "<script>\n%s</script>\n</body>\n</html>\n" % (title, css, json_text, js))


if __name__ == "__main__":
    main()
