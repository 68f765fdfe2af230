"""`swamp docs [TOPIC]`: the documentation shipped with the package
(app/doc_topics.py), so that an installed swamp can show what its help
texts point at."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, table


@click.command("docs")
@click.argument("topic", required=False)
@global_options
@click.pass_obj
def docs(state: CliState, topic):
    """Show a documentation topic, or list the topics.

    TOPIC is a page (workflows, serve, ...) and optionally one section of it
    (serve#schedules). Help texts point at topics as 'swamp docs TOPIC'.

    Example: swamp docs workflows"""
    from swamp.app import doc_topics

    if topic is None:
        topics = doc_topics.list_topics()
        emit(state, topics, lambda: table(topics, ["topic", "title"]))
        return
    page = doc_topics.show_topic(topic)

    def human():
        from swamp.cli.echo import echo

        echo(page["text"].rstrip("\n"))

    emit(state, page, human)
