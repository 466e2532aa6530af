"""The document profiles installed and those switched on, for `docqa profiles` and the status page."""

from __future__ import annotations

from dataclasses import dataclass

from docqa.core.settings import Settings
from docqa.profiles.generic import GenericProfile
from docqa.profiles.registry import ProfileSet, installed


@dataclass(frozen=True)
class ProfileInfo:
    name: str
    version: int
    description: str
    on: bool  # switched on by DOCQA_PROFILES


def profile_listing(settings: Settings) -> list[ProfileInfo]:
    """Every installed profile, the generic core first (always on); an unknown name in DOCQA_PROFILES raises
    InvalidRequestError naming the installed ones."""
    on = ProfileSet.named(settings.retrieval.profiles).names
    generic = GenericProfile()
    listed = [ProfileInfo(generic.name, generic.version, generic.description, True)]
    for name, make in installed().items():
        profile = make()
        listed.append(ProfileInfo(name, profile.version, profile.description, name in on))
    return listed
