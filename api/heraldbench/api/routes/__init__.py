"""One router per resource; :data:`api_router` gathers them under ``/api``."""

from fastapi import APIRouter

from heraldbench.api.routes import datasets, experiments, health, specs, studies

api_router = APIRouter(prefix="/api")
for _module in (health, specs, experiments, studies, datasets):
    api_router.include_router(_module.router)

__all__ = ["api_router"]
