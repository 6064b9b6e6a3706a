"""renyi.plotting: figures that a phone can read, and the record of their smallest text."""

import base64
import struct

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from renyi import plotting  # noqa: E402


def _text_chunks(png: bytes) -> dict:
    found, i = {}, 8
    while i + 8 <= len(png):
        size, kind = struct.unpack(">I", png[i : i + 4])[0], png[i + 4 : i + 8]
        if kind == b"tEXt":
            key, _, value = png[i + 8 : i + 8 + size].partition(b"\0")
            found[key.decode()] = value.decode()
        i += 12 + size
    return found


def _shown_px(fig, text, png):
    """CSS pixels of ``text`` when the PNG is scaled to the phone's column (never enlarged)."""
    width = struct.unpack(">I", png[16:20])[0]
    scale = min(1.0, plotting.PHONE_COLUMN_PX / width)
    return text.get_fontsize() * fig.dpi / 72 * scale


@pytest.mark.parametrize("width", [4.0, 6.4, 7.5])
def test_every_text_is_legible_in_the_phone_column_and_the_png_records_it(width):
    fig, ax = plotting.figure(width=width, height=3.0)
    ax.plot([0, 1], [0, 1], label="a curve")
    ax.legend(fontsize=6)
    tiny = ax.text(0.5, 0.5, "a 5-pt note", fontsize=5)
    ax.set(xlabel="x", title="t")
    png = base64.b64decode(plotting.png(fig))
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    # each text measured from the image's own width, independently of legible()'s arithmetic
    assert min(_shown_px(fig, t, png) for t in texts) >= plotting.MIN_TEXT_PX - 1e-6
    recorded = float(_text_chunks(png)[plotting.TEXT_KEY])
    assert recorded == pytest.approx(min(t.get_fontsize() for t in texts) * fig.dpi / 72, abs=0.01)
    assert "Software" not in _text_chunks(png)  # no version string: identical figures, identical files
    assert tiny.get_fontsize() > 5
    plt.close(fig)


def test_text_already_large_enough_is_left_alone():
    fig, ax = plotting.figure(width=3.0, height=2.0)  # 300 px: shown at its own size on a phone
    label = ax.set_xlabel("x", fontsize=14)
    plotting.png(fig)
    assert label.get_fontsize() == 14
    plt.close(fig)


def test_a_figure_without_axes_has_no_png():
    fig = plt.figure()
    assert plotting.png(fig) is None
    plt.close(fig)
