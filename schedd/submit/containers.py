"""Container jobs as HTCondor's submit code makes them (SubmitHash::SetUniverse and
SetExecutable, and the container universe chapter of the manual): which descriptions
are container jobs, which images are refused, what kind of image each is and whether
HTCondor transfers it."""

from __future__ import annotations

import os

from schedd.submit.cluster import RuleReader
from schedd.submit.errors import SubmitError
from schedd.submit.values import is_true, string_value

#: image schemes apptainer pulls itself that HTCondor refuses
REFUSED_SCHEMES = ("instance://", "library://", "shub://")
#: image schemes the container runtime fetches from a registry: never transferred
REGISTRY_SCHEMES = ("docker://", "oras://")
#: universes an image turns into a container job
IMAGE_UNIVERSES = ("vanilla", "container")


def fail(message: str, command: str) -> SubmitError:
    return SubmitError(message, command=command)


def image(r: RuleReader, command: str) -> str | None:
    """An image command's value without surrounding blanks and quotes, or None."""
    text = r.get(command)
    return string_value(text) or None if text is not None else None


def check_images(r: RuleReader, universe: str) -> None:
    """The image combinations HTCondor refuses: container_image in the docker universe,
    and docker_image together with container_image."""
    container, docker = image(r, "container_image"), image(r, "docker_image")
    if universe == "docker" and container:
        raise fail("the docker universe takes docker_image, not container_image; use "
                   "universe = container for container_image", "container_image")
    if universe in IMAGE_UNIVERSES and container and docker:
        raise fail("give docker_image or container_image, not both", "container_image")


def is_container_job(r: RuleReader, universe: str) -> bool:
    """A container universe job, or a vanilla one that names an image."""
    return universe == "container" or (
        universe == "vanilla" and bool(image(r, "container_image") or image(r, "docker_image")))


def image_kind(name: str) -> str:
    """The job attribute that says what kind of image ``name`` is: a registry image
    (docker://), a SIF file (.sif, or an oras:// artifact), or a sandbox directory."""
    if name.startswith("docker:"):
        return "WantDockerImage"
    if name.startswith("oras://") or name.endswith(".sif"):
        return "WantSIF"
    return "WantSandboxImage"


def container_attributes(r: RuleReader) -> None:
    """ContainerImage (or DockerImage), the kind of image, where it comes from and the
    transfer commands of a container job."""
    name = image(r, "container_image")
    if name is None:
        if image(r, "docker_image") is None:
            raise fail("container jobs need a container_image (or a docker_image)", "container_image")
        r["WantDockerImage"] = True
        return
    if name.startswith(REFUSED_SCHEMES):
        raise fail(f"{name!r} is not a container image HTCondor can use; give a docker:// or "
                   "oras:// image, a .sif file or a sandbox directory", "container_image")
    transfer = is_true(r.get("transfer_container"), default=True)
    registry = next((s for s in REGISTRY_SCHEMES if name.startswith(s)), None)
    if registry:
        source = registry[:-3]
    else:
        source = "cedar" if transfer else "local"
    r["ContainerImageSource"] = source
    r["ContainerImage"] = os.path.basename(name) if source == "cedar" else name
    r[image_kind(name)] = True
    if r.get("transfer_container") is not None:
        r["TransferContainer"] = transfer
    target = r.get("container_target_dir")
    if target:
        r["ContainerTargetDir"] = string_value(target)


def transferred_image(r: RuleReader) -> str | None:
    """The image HTCondor transfers with the job's input, if it does."""
    if r.attr("ContainerImageSource") != "cedar":
        return None
    return image(r, "container_image")
