"""What a method run over the API asks of the caller's grants, beyond
``run`` on the model: serve's route asks this before anything runs.

- Inputs that replace an argument the definition fixes change what the
  model does (a command/shell model's ``run``): that is ``write`` on the
  model, as editing its file would be.
- A run of a ``type`` with no model behind it writes the automatic
  definition of that name with the caller's values: ``write`` too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.models.arguments import fixed_arguments
from swamp.models.runner import Runner

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def replaced_arguments(repo: Repo, model: str, method: str, batch: list[dict]) -> list[str]:
    """The fixed arguments of ``model`` that any inputs map of ``batch``
    replaces (sorted, without repeats); a bad model, method or input is
    the same error the run itself would give."""
    runner = Runner(repo)
    found: set[str] = set()
    for inputs in batch:
        definition, model_type = runner.check(model, method, inputs)
        found.update(fixed_arguments(definition, model_type, method, inputs))
    return sorted(found)
