"""The profiler's results, as torch.autograd.profiler_util: FunctionEvent (one timed call),
FunctionEventAvg (the calls of one name added up), EventList (a profile's events) and the table
they print."""

import json


class Interval:
    """A time range in microseconds: start and end."""

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        """end - start."""
        return self.end - self.start


class FunctionEvent:
    """One timed call: its name, thread, start and end in microseconds, the events it made
    (cpu_children) and the one it ran in (cpu_parent); input_shapes with record_shapes."""

    count = 1

    def __init__(
        self, id, name, thread, start_us, end_us, input_shapes=None, sequence_nr=-1, node_id=-1
    ):
        self.id = id
        self.node_id = node_id
        self.name = self.key = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes
        self.sequence_nr = sequence_nr
        self.cpu_parent = None
        self.cpu_children = []

    def append_cpu_child(self, child):
        """Record `child` as an event this one made."""
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        """Record `parent` as the event this one ran in."""
        self.cpu_parent = parent

    @property
    def cpu_time_total(self):
        """Microseconds from call to return."""
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        """cpu_time_total without the time of the events it called."""
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def cpu_time(self):
        """The time of this one call (what FunctionEventAvg averages)."""
        return self.cpu_time_total

    def __repr__(self):
        return (
            f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
            f"cpu_time={self.cpu_time_total:.3f}us input_shapes={self.input_shapes}>"
        )


class FunctionEventAvg:
    """The events of one name added up: how many, their CPU total and self CPU times."""

    # What torch's table can also sort by, always 0 here: no device, no memory recorded.
    device_time_total = self_device_time_total = cpu_memory_usage = self_cpu_memory_usage = 0

    def __init__(self):
        self.key = self.input_shapes = None
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_parent = None

    def add(self, event):
        """Count one more event (or average) of this key."""
        if self.key is None:
            self.key, self.cpu_parent = event.key, event.cpu_parent
            self.input_shapes = event.input_shapes
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self):
        """The average time of one call."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
            f"cpu_time={_format_time(self.cpu_time_total)} count={self.count}>"
        )


class EventList(list):
    """The events of a profile, in the order they started (or averages, from key_averages)."""

    def key_averages(
        self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False
    ):
        """One FunctionEventAvg per event name (and input shapes, if asked), in order of appearance."""
        averages = {}
        for event in self:
            key = (event.key, str(event.input_shapes)) if group_by_input_shape else event.key
            averages.setdefault(key, FunctionEventAvg()).add(event)
        return EventList(averages.values())

    def _populate_cpu_children(self):
        """Make each event a child of the innermost one of its thread whose time range holds it."""
        by_thread = {}
        for event in self:
            by_thread.setdefault((event.thread, event.node_id), []).append(event)
        for _, events in sorted(by_thread.items(), key=lambda item: item[0]):
            open_events = []  # each inside the ones before it
            for event in sorted(events, key=lambda e: (e.time_range.start, -e.time_range.end)):
                while open_events:
                    parent = open_events[-1]
                    start, end = event.time_range.start, event.time_range.end
                    if start >= parent.time_range.end or end > parent.time_range.end:
                        open_events.pop()  # it ended before this one, or ends inside it
                    else:
                        parent.append_cpu_child(event)
                        event.set_cpu_parent(parent)
                        break
                open_events.append(event)

    def total_average(self):
        """All the events added up into one FunctionEventAvg named "Total"."""
        total = FunctionEventAvg()
        for event in self:
            total.count += event.count
            total.cpu_time_total += event.cpu_time_total
            total.self_cpu_time_total += event.self_cpu_time_total
        total.key = "Total"
        return total

    @property
    def self_cpu_time_total(self):
        """The sum of the events' self CPU times."""
        return sum(event.self_cpu_time_total for event in self)

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_src_column_width=75,
        max_name_column_width=55,
        max_shapes_column_width=80,
        header=None,
        top_level_events_only=False,
        time_unit=None,
    ):
        """The events as PyTorch's text table, sorted by an attribute (largest first)."""
        return _table(
            self,
            sort_by,
            row_limit,
            max_name_column_width,
            header,
            top_level_events_only,
            time_unit,
        )

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (chrome://tracing, Perfetto)."""
        trace = [
            {
                "name": e.name,
                "ph": "X",
                "ts": e.time_range.start,
                "dur": e.cpu_time_total,
                "pid": 0,
                "tid": 0,
                "cat": "cpu_op",
            }
            for e in self
        ]
        with open(path, "w") as file:
            json.dump({"traceEvents": trace}, file)

    def __str__(self):
        return self.table()


def _format_time(time_us, time_unit=None):
    """PyTorch's way of printing a time given in microseconds: s, ms or us, 3 decimals."""
    unit = time_unit or ("s" if time_us >= 1e6 else "ms" if time_us >= 1e3 else "us")
    return f"{time_us / {'s': 1e6, 'ms': 1e3, 'us': 1.0}[unit]:.3f}{unit}"


def _format_share(time_us, total_us):
    return "NaN" if total_us == 0 else f"{time_us * 100.0 / total_us:.2f}%"


def _table(events, sort_by, row_limit, max_name_width, header, top_level_only, time_unit):
    """PyTorch's table layout (torch.autograd.profiler_util._build_table), CPU columns only."""
    if not events:
        return ""
    if sort_by is not None:
        attribute = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda event: getattr(event, attribute), reverse=True)
    name_width = max(len(event.key) for event in events) + 4
    if max_name_width is not None:
        name_width = min(name_width, max_name_width)
    widths = [name_width] + [12] * 6
    row = "".join(f"{{:>{width}}}  " for width in widths)
    rule = "".join("-" * width + "  " for width in widths)
    total = sum(event.self_cpu_time_total for event in events)
    lines = []
    if header is not None:
        lines += ["=" * (sum(widths) + 2 * len(widths) - 2), header]
    if top_level_only:
        lines += [
            "=" * (sum(widths) + 2 * len(widths) - 2),
            "This report only display top-level ops statistics",
        ]
    names = [
        "Name",
        "Self CPU %",
        "Self CPU",
        "CPU total %",
        "CPU total",
        "CPU time avg",
        "# of Calls",
    ]
    lines += [rule, row.format(*names), rule]
    shown = 0
    for event in events:
        if shown == row_limit:
            break
        if top_level_only and event.cpu_parent is not None:
            continue
        shown += 1
        name = event.key
        if max_name_width is not None and len(name) >= max_name_width - 3:
            name = name[: max_name_width - 3] + "..."
        lines.append(
            row.format(
                name,
                _format_share(event.self_cpu_time_total, total),
                _format_time(event.self_cpu_time_total, time_unit),
                _format_share(event.cpu_time_total, total),
                _format_time(event.cpu_time_total, time_unit),
                _format_time(event.cpu_time, time_unit),
                event.count,
            )
        )
    lines += [rule, f"Self CPU time total: {_format_time(total, time_unit)}"]
    return "".join(line + "\n" for line in lines)
