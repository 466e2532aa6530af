"""The document profiles installed and those switched on (`docqa profiles`), and a collection's own choice among
them (`docqa collections profiles`, /v1/collections/{name}/profiles)."""

from __future__ import annotations

from dataclasses import dataclass

from docqa.core.settings import Settings
from docqa.profiles.generic import GenericProfile
from docqa.profiles.registry import ProfileSet, installed, spec_names
from docqa.service.facade import DocQA


@dataclass(frozen=True)
class ProfileInfo:
    name: str
    version: int
    description: str
    on: bool  # switched on by DOCQA_RETRIEVAL_PROFILES


def profile_listing(settings: Settings) -> list[ProfileInfo]:
    """Every installed profile, the generic core first (always on); an unknown name in DOCQA_RETRIEVAL_PROFILES
    raises InvalidRequestError naming the installed ones."""
    on = ProfileSet.named(settings.retrieval.profiles).names
    generic = GenericProfile()
    listed = [ProfileInfo(generic.name, generic.version, generic.description, True)]
    for name, make in installed().items():
        profile = make()
        listed.append(ProfileInfo(name, profile.version, profile.description, name in on))
    return listed


@dataclass(frozen=True)
class CollectionProfiles:
    collection: str
    chosen: str | None  # what the collection chose (names by comma, "none"); None: the deployment's
    on: tuple[str, ...]  # the profiles its questions are read with now


def collection_profiles(qa: DocQA, name: str) -> CollectionProfiles:
    """The profiles a collection's questions are read with, and what it chose."""
    row = qa.collection(name)
    return CollectionProfiles(row.name, row.profiles, qa.retriever.profiles_for(row).names)


def choose_profiles(qa: DocQA, name: str, spec: str | None) -> CollectionProfiles:
    """A collection's own choice among the deployment's profiles (`spec`: names by comma, `none`; None or `auto`:
    the deployment's); a profile not switched on is refused (InvalidRequestError). Its cached answers go."""
    row = qa.collection(name)
    chosen = None if spec_names(spec) is None else ",".join(qa.profiles.subset(spec).names) or "none"
    qa.store.set_profiles(row.id, chosen)
    return collection_profiles(qa, name)
