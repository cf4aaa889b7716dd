"""DTDs, external subsets and entities never load, whatever the prolog holds and whatever the ids name.

Each case is a bundled sample with something put before its root element. The reader must refuse
it before parsing, with a message that does not depend on what the DTD's id names (so it cannot
tell whether a file exists), and the parser itself must not be able to load anything either.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

from uml2perf.errors import InputError
from uml2perf.reader import read_bytes
from uml2perf.reader.xml import _parser, load_bytes

ROOT = Path(__file__).resolve().parents[1]
LAPW0 = (ROOT / "samples" / "lapw0.uml").read_text()
DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'


def _with_prolog(prolog: str, text: str = LAPW0) -> bytes:
    assert text.startswith(DECLARATION)
    return (DECLARATION + "\n" + prolog + text[len(DECLARATION) :]).encode()


def _entity_dtd(tmp_path: Path) -> Path:
    dtd = tmp_path / "local.dtd"
    dtd.write_text('<!ENTITY c "7777">\n')
    return dtd


def _message(data: bytes) -> str:
    with pytest.raises(InputError) as info:
        load_bytes(data, "m.uml")
    return str(info.value)


def test_a_local_dtd_that_defines_entities_is_refused(tmp_path: Path) -> None:
    dtd = _entity_dtd(tmp_path)
    text = LAPW0.replace('cost="MPIinit()"', 'cost="&c;"', 1)
    message = _message(_with_prolog(f'<!DOCTYPE x SYSTEM "{dtd}">', text))
    assert "external DTD" in message and "7777" not in message


@pytest.mark.parametrize("filler", ["<!--" + "x" * 5000 + "-->", "<?pi " + "y" * 9000 + "?>", "\n" * 6000])
def test_nothing_before_the_doctype_hides_it(filler: str, tmp_path: Path) -> None:
    dtd = _entity_dtd(tmp_path)
    assert "external DTD" in _message(_with_prolog(f'{filler}<!DOCTYPE x SYSTEM "{dtd}">'))


def test_an_existing_file_and_a_missing_one_give_the_same_answer() -> None:
    answers = {
        _message(_with_prolog(f'<!DOCTYPE x SYSTEM "{target}">'))
        for target in ("/etc/passwd", "/does/not/exist", "/dev/zero", "/proc/self/environ")
    }
    assert len(answers) == 1, answers


def test_a_fifo_as_dtd_and_a_device_as_parameter_entity_are_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "dtd.fifo"
    os.mkfifo(fifo)
    assert "external DTD" in _message(_with_prolog(f'<!DOCTYPE x SYSTEM "{fifo}">'))
    assert "entity" in _message(_with_prolog('<!DOCTYPE x [<!ENTITY % p SYSTEM "/dev/zero"> %p;]>'))
    assert "entity" in _message(_with_prolog(f'<!DOCTYPE x [<!ENTITY % p SYSTEM "{fifo}"> %p;]>'))


def test_internal_subsets_and_public_ids_are_refused() -> None:
    assert "declarations" in _message(_with_prolog('<!DOCTYPE x [<!ATTLIST x cost CDATA "7777">]>'))
    assert "external DTD" in _message(
        _with_prolog('<!DOCTYPE x PUBLIC "-//A//B" "http://example.org/a.dtd">')
    )


def test_a_doctype_in_utf16_is_seen_too(tmp_path: Path) -> None:
    dtd = _entity_dtd(tmp_path)
    text = f'<?xml version="1.0" encoding="UTF-16"?>\n<!DOCTYPE x SYSTEM "{dtd}">' + LAPW0[len(DECLARATION) :]
    assert "external DTD" in _message(text.encode("utf-16"))


def test_an_encoding_whose_markup_is_not_ascii_is_refused() -> None:
    text = '<?xml version="1.0" encoding="UTF-7"?>\n+ADw-!DOCTYPE x SYSTEM +ACI-/etc/passwd+ACI-+AD4-<x/>'
    assert "encoding" in _message(text.encode())


def test_a_plain_doctype_and_one_in_a_comment_are_read() -> None:
    plain = read_bytes(_with_prolog("<!DOCTYPE XMI>"), "m.uml")
    commented = read_bytes(_with_prolog('<!-- <!DOCTYPE XMI SYSTEM "uml14xmi12.dtd"> -->'), "m.uml")
    assert plain.activities and commented.activities


def test_the_parser_alone_cannot_load_a_local_dtd(tmp_path: Path) -> None:
    """Behind the prolog scan: the parser's configuration answers every load with nothing."""
    dtd = _entity_dtd(tmp_path)
    root = etree.fromstring(f'<!DOCTYPE x SYSTEM "{dtd}"><x cost="&c;"/>'.encode(), _parser())
    assert root.get("cost") != "7777"


def test_the_parser_alone_does_not_wait_for_a_fifo_or_read_a_device(tmp_path: Path) -> None:
    fifo = tmp_path / "dtd.fifo"
    os.mkfifo(fifo)
    script = (
        "from lxml import etree\n"
        "from uml2perf.reader.xml import _parser\n"
        f"etree.fromstring(b'<!DOCTYPE x SYSTEM \"{fifo}\"><x/>', _parser())\n"
        "etree.fromstring(b'<!DOCTYPE x [<!ENTITY % p SYSTEM \"/dev/zero\"> %p;]><x/>', _parser())\n"
        "print('done')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "done", done.stderr


@pytest.mark.parametrize("data", [b"", b" ", b"\n\t\r\n  \x0b\x0c"])
def test_an_empty_or_blank_file_is_refused_as_empty(data: bytes) -> None:
    with pytest.raises(InputError, match="file is empty"):
        load_bytes(data, "blank.uml")


def test_a_file_with_text_after_blanks_is_not_empty() -> None:
    with pytest.raises(InputError) as caught:
        load_bytes(b"\n  x", "text.uml")
    assert "file is empty" not in str(caught.value)
