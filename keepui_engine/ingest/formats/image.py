"""Images via Pillow, header only: size, camera and date tags; the picture's text needs OCR."""

from __future__ import annotations

import io
import warnings
from datetime import datetime
from typing import Any

from keepui_engine.ingest.extracted import Extracted, ExtractError, Limits

# Pillow's Image.open applies a process-wide pixel cap; opening through the format's plugin
# class reads only the header and leaves the cap to us (`Limits.max_pixels`).
_PLUGINS = {
    "image/jpeg": ("JpegImagePlugin", "JpegImageFile"),
    "image/png": ("PngImagePlugin", "PngImageFile"),
    "image/tiff": ("TiffImagePlugin", "TiffImageFile"),
    "image/webp": ("WebPImagePlugin", "WebPImageFile"),
    "image/gif": ("GifImagePlugin", "GifImageFile"),
    "image/bmp": ("BmpImagePlugin", "BmpImageFile"),
}
_MAKE, _MODEL, _DATETIME = 0x010F, 0x0110, 0x0132
_EXIF_IFD, _DATETIME_ORIGINAL = 0x8769, 0x9003


def open_header(
    data: bytes, name: str, mime: str, max_pixels: int, setting: str = "max_pixels"
) -> Any:
    """Read an image's header (no pixel decoding) and refuse it above `max_pixels`.

    Args:
        data: The image bytes.
        name: The input's name, for messages.
        mime: One of the supported image types.
        max_pixels: The largest width * height accepted.
        setting: The `[ingest]` key that sets `max_pixels`, named when the image is refused.

    Returns:
        A lazily loaded PIL image.

    Raises:
        ExtractError: Unsupported or damaged image, or too many pixels.
    """
    import importlib

    from PIL import Image

    module, cls = _PLUGINS.get(mime, ("", ""))
    if not module:
        raise ExtractError(f"{name}: {mime} images are not supported; convert it to PNG or JPEG.")
    plugin = getattr(importlib.import_module(f"PIL.{module}"), cls)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = plugin(io.BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ExtractError(f"{name}: image refused as a decompression bomb ({exc}).") from exc
    except Exception as exc:  # plugins raise SyntaxError, OSError, ValueError, struct.error
        raise ExtractError(
            f"{name}: damaged or unreadable image ({type(exc).__name__}: {exc}); "
            "re-save it as PNG or JPEG."
        ) from exc
    width, height = image.size
    if width * height > max_pixels:
        raise ExtractError(
            f"{name}: image is {width}x{height} = {width * height:,} pixels, over the cap of "
            f"{max_pixels:,}; refused as a possible decompression bomb (raise "
            f"`[ingest] {setting}` in keepui.toml to read it)."
        )
    return image


def _clean(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return " ".join(str(value or "").replace("\x00", " ").split())


def camera(make: Any, model: Any) -> str:
    """EXIF Make + Model without the repeated maker ("Canon" + "Canon PowerShot S40")."""
    make_s, model_s = _clean(make), _clean(model)
    if make_s and model_s.lower().startswith(make_s.lower()):
        return model_s
    return " ".join(s for s in (make_s, model_s) if s)


def exif_date(value: Any) -> str | None:
    """An EXIF "YYYY:MM:DD HH:MM:SS" as ISO 8601, or None when malformed."""
    try:
        return datetime.strptime(_clean(value)[:19], "%Y:%m:%d %H:%M:%S").isoformat()
    except ValueError:
        return None


def png_exif(data: bytes) -> bytes | None:
    """The eXIf chunk of a PNG, found by walking the chunk headers (no pixel is decoded)."""
    at = 8
    while at + 8 <= len(data):
        length = int.from_bytes(data[at : at + 4], "big")
        kind = data[at + 4 : at + 8]
        if kind == b"eXIf":
            return data[at + 8 : at + 8 + length]
        if kind == b"IEND":
            return None
        at += 12 + length
    return None


def _exif_tags(image: Any, data: bytes) -> dict[str, str]:
    tags: dict[str, str] = {}
    if image.format == "PNG" and "exif" not in image.info:
        # Pillow's PNG getexif() decodes the whole picture to look for an eXIf chunk after
        # the pixels: 2.5 GB for a 0.7 MB PNG of 240 megapixels (issue 23).
        found = png_exif(data)
        if found is None:
            return tags
        image.info["exif"] = found
    try:
        exif = image.getexif()
        original = exif.get_ifd(_EXIF_IFD).get(_DATETIME_ORIGINAL)
    except Exception:  # damaged EXIF must not lose the image
        return tags
    maker = camera(exif.get(_MAKE), exif.get(_MODEL))
    if maker:
        tags["camera"] = maker
    date = exif_date(original) or exif_date(exif.get(_DATETIME))
    if date:
        tags["date"] = date
    return tags


def extract_image(data: bytes, name: str, mime: str, limits: Limits) -> Extracted:
    """Extract an image's metadata; its text, if any, is left to OCR (`ocr_pages=[0]`).

    Args:
        data: The image bytes.
        name: The input's name, for messages.
        mime: The sniffed image type, kept as the content type.
        limits: `max_pixels` caps width * height.

    Returns:
        A one-line description ("Image 480x360, Canon PowerShot S40, 2003-12-14"); tags
        width, height, camera and date when known.

    Raises:
        ExtractError: Damaged, unsupported or oversized image.
    """
    image = open_header(data, name, mime, limits.max_pixels)
    try:
        width, height = image.size
        tags = {"width": str(width), "height": str(height), **_exif_tags(image, data)}
    finally:
        image.close()
    parts = [f"Image {width}x{height}", tags.get("camera", ""), tags.get("date", "")[:10]]
    text = ", ".join(p for p in parts if p)
    notes = ["text in the picture is only found after OCR"]
    return Extracted(text, mime, tags, [], [0], notes)
