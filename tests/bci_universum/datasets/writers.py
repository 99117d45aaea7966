"""Small XDF and BCI2000 files for the reader tests, in the formats' documented layouts."""

import struct

import numpy as np


def write_xdf(path, streams, footer=True, chunk_size=None):
    """Write a small XDF file: ``streams`` is a list of (header dict, stamps, values).

    ``footer=False`` leaves out the stream footers, as in a file whose recorder never closed it;
    ``chunk_size`` samples go in each data chunk (default: one chunk per stream).
    """

    def chunk(tag, content):
        length = len(content) + 2
        return bytes([8]) + struct.pack("<Q", length) + struct.pack("<H", tag) + content

    def varlen(n):
        return bytes([4]) + struct.pack("<I", n)

    out = b"XDF:" + chunk(1, b'<?xml version="1.0"?><info><version>1.0</version></info>')
    for sid, (header, stamps, values) in enumerate(streams, start=1):
        xml = "<?xml version='1.0'?><info>" + "".join(f"<{k}>{v}</{k}>" for k, v in header.items())
        out += chunk(2, struct.pack("<I", sid) + (xml + "</info>").encode())
        step = chunk_size or max(len(stamps), 1)
        for start in range(0, len(stamps), step):
            part = list(
                zip(stamps[start : start + step], values[start : start + step], strict=True)
            )
            body = struct.pack("<I", sid) + varlen(len(part))
            for stamp, value in part:
                body += bytes([8]) + struct.pack("<d", stamp)
                if header["channel_format"] == "string":
                    for text in value:
                        body += varlen(len(text.encode())) + text.encode()
                else:
                    body += np.asarray(value, dtype="<f4").tobytes()
            out += chunk(3, body)
        footer_xml = (
            f"<?xml version='1.0'?><info><first_timestamp>{stamps[0] if len(stamps) else 0}"
            f"</first_timestamp><last_timestamp>{stamps[-1] if len(stamps) else 0}"
            f"</last_timestamp><sample_count>{len(stamps)}</sample_count></info>"
        )
        if footer:
            out += chunk(6, struct.pack("<I", sid) + footer_xml.encode())
    path.write_bytes(out)
    return path


def write_bci2000(path, counts, stimulus_code, sfreq, names, gains=None, offsets=None):
    """Write a BCI2000 ``.dat`` file (format 1.1, int16 data, states Running + StimulusCode).

    ``counts`` is (n_samples, n_channels) in A/D units; ``gains`` may carry a unit
    (``"0.1muV"``). Follows the BCI2000 file format documentation: a text header of
    ``HeaderLen`` bytes (state vector and parameter definitions), then per sample the channels'
    values followed by the state vector bytes.
    """
    n_ch = counts.shape[1]
    states = "Running 1 0 0 0\r\nStimulusCode 8 0 1 0\r\n"
    params = [
        f"Source:Signal%20Properties:DataIOFilter int SourceCh= {n_ch} 16 1 % // channels",
        f"Source:Signal%20Properties:DataIOFilter float SamplingRate= {sfreq:g}Hz 256Hz 1 % //",
        "Source:Signal%20Properties:DataIOFilter list ChannelNames= "
        f"{n_ch} {' '.join(names)} // names",
    ]
    if gains is not None:
        params.append(
            "Source:Signal%20Properties:DataIOFilter floatlist SourceChGain= "
            f"{n_ch} {' '.join(map(str, gains))} 0.033 % % // A/D units to muV"
        )
    if offsets is not None:
        params.append(
            "Source:Signal%20Properties:DataIOFilter floatlist SourceChOffset= "
            f"{n_ch} {' '.join(map(str, offsets))} 0 % % // offsets"
        )
    body = (
        "[ State Vector Definition ] \r\n"
        + states
        + "[ Parameter Definition ] \r\n"
        + "".join(p + "\r\n" for p in params)
        + "\r\n"
    )
    first = "BCI2000V= 1.1 HeaderLen= {:>6} SourceCh= {} StatevectorLen= 2 DataFormat= int16\r\n"
    length = len(first.format(0, n_ch)) + len(body)
    header = (first.format(length, n_ch) + body).encode()
    frames = b"".join(
        np.asarray(row, dtype="<i2").tobytes() + bytes([1, int(code)])
        for row, code in zip(counts, stimulus_code, strict=True)
    )
    path.write_bytes(header + frames)
    return path


def stream_header(name, stype, n_ch, srate, fmt):
    return {
        "name": name,
        "type": stype,
        "channel_count": n_ch,
        "nominal_srate": srate,
        "channel_format": fmt,
        "source_id": name,
    }
