"""Specs: presets to start from, and validation without submitting."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request
from pydantic import WithJsonSchema
from starlette.concurrency import run_in_threadpool

from heraldbench.api.bodies import StrictJSONRoute
from heraldbench.api.deps import RunMemoryDep, SettingsDep, require_read, require_write
from heraldbench.api.openapi import GRID_REF
from heraldbench.api.planning import normalised_spec, plan_experiment
from heraldbench.api.presets import presets
from heraldbench.api.routes.common import WRITE_ERRORS
from heraldbench.api.schemas import Preset, Validated

__all__ = ["router"]

router = APIRouter(route_class=StrictJSONRoute, tags=["specs"])


@router.get("/presets", response_model=list[Preset], dependencies=[Depends(require_read)])
def list_presets() -> list[Preset]:
    """Ready-made specs: Herald's Table 1, every scheduler, a lookahead x cache grid."""
    return [Preset(**p) for p in presets()]


@router.post(
    "/specs/validate",
    response_model=Validated,
    dependencies=[Depends(require_write)],  # it reads the files a spec names, as a submission
    responses=WRITE_ERRORS,
)
async def validate_spec(
    request: Request,
    document: Annotated[
        dict[str, Any],
        WithJsonSchema(GRID_REF),
        Body(description="an experiment spec, possibly a grid"),
    ],
    settings: SettingsDep,
    memory: RunMemoryDep,
) -> Validated:
    """Check a spec as a submission would (nothing is stored): 200 or 422 naming each field."""
    request.state.document = document
    grid = await run_in_threadpool(plan_experiment, document, settings, memory)
    return Validated(
        valid=True,
        spec=normalised_spec(grid),
        runs=len(grid.runs),
        axes={a.name: list(a.values) for a in grid.axes},
        scheduler_axes=grid.scheduler_axes,
        seeds=grid.seeds,
    )
