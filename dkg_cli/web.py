"""`dkg web …` and `dkg chat`: the guideline RAG chatbot over web guidelines."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from dkg.settings import load_settings
from dkg_cli.app import app
from dkg_cli.env import configure_prefect
from dkg_cli.output import err, out

web_app = typer.Typer(help="The guideline RAG chatbot over web guidelines.", no_args_is_help=True)
app.add_typer(web_app, name="web")


@web_app.command("ingest")
def web_ingest_cmd(
    toc_url: Annotated[str, typer.Argument(help="The guideline's table of contents page.")],
    site: Annotated[str | None, typer.Option("--site", help="Name to keep the site under.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Crawl and index a web guideline (a re-crawl processes only new and changed pages)."""
    configure_prefect(load_settings())
    from flows.ingest_web_guideline import ingest_web_guideline

    res = ingest_web_guideline(toc_url, site)
    if as_json:
        print(res.model_dump_json())
        return
    out.print(f"{res.site}: {res.pages} pages ({res.medical} medical); new {res.new}, changed {res.changed}, "
              f"removed {res.removed}, unchanged {res.unchanged}, failed {len(res.failed)}; URL list {res.xlsx}")
    for f in res.failed:
        err.print(f"[yellow]skipped:[/] {f}", highlight=False)


@web_app.command("ask")
def web_ask_cmd(
    question: Annotated[str, typer.Argument(help="A question in Japanese or English.")],
    site: Annotated[str | None, typer.Option("--site", help="A kept site (default: the last crawled).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    mode: Annotated[str | None, typer.Option("--mode", help="best or protocol (default: DKG_RAG_MODE, best).")] = None,
) -> None:
    """Answer from the site's pages only, or refuse with the protocol's sentences."""
    from dkg.web.rag import ask, dumps, index_site, load_site

    if mode not in (None, "best", "protocol"):
        raise typer.BadParameter(f"--mode must be best or protocol, not {mode!r}")
    settings = load_settings()
    answer = ask(settings, index_site(load_site(settings, site)), question, mode=mode)
    if as_json:
        print(dumps(answer))
        return
    out.print(f"[bold]{answer.status}[/] ({answer.mode}): {escape(answer.answer)}", highlight=False)
    if answer.detail:
        out.print(f"why: {escape(answer.detail)}", highlight=False)
    out.print(f"{'keywords' if answer.mode == 'protocol' else 'subject'}: {', '.join(answer.keywords)}",
              highlight=False)
    for r in answer.references:
        where = f" — {r.section}" if r.section else ""
        out.print(f"  {r.score:.3f} {r.url} {escape(r.title)}{escape(where)}", highlight=False)


@app.command("chat")
def chat_cmd(site: Annotated[str | None, typer.Option("--site", help="A kept site.")] = None) -> None:
    """Ask questions one after another (each answered on its own); an empty line ends."""
    from dkg.web.rag import ask, index_site, load_site

    settings = load_settings()
    index = index_site(load_site(settings, site))
    while True:
        try:
            q = input("? ")
        except EOFError:
            break
        if not q.strip():
            break
        a = ask(settings, index, q)
        out.print(a.answer, highlight=False)
        for r in a.references:
            out.print(f"  [{r.score:.2f}] {r.url}", highlight=False)

