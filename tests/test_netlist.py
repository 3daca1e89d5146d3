"""The SPICE netlist reader: units, cards, parameters, subcircuits, and every error with its line."""
import dataclasses
import io
import math
import re

import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn.components.electrical import (Capacitor, CurrentSource, Inductor, MutualInductance, Resistor,
                                          VoltageSource)
from netdyn.errors import ParseError
from netdyn.io.cards import TranCard
from netdyn.io.netlist import evaluate, parse_value, read_netlist, split_cards, tokenize
from netdyn.lagrange.sources import pulse, pwl, sine
from netdyn.symbols import t


def num(x):
    return float(sp.sympify(x))


def wave(expr, times):
    f = sp.lambdify(t, expr, "numpy")
    return np.broadcast_to(f(np.asarray(times, dtype=float)), np.shape(times)).astype(float)


# --- numbers ----------------------------------------------------------------------------------

@pytest.mark.parametrize("token, value", [
    ("1", 1.0), ("-2.5", -2.5), (".5", 0.5), ("1e3", 1e3), ("1.5E-3", 1.5e-3), ("+4", 4.0),
    ("1f", 1e-15), ("2p", 2e-12), ("3n", 3e-9), ("4u", 4e-6), ("4µ", 4e-6), ("5m", 5e-3),
    ("6k", 6e3), ("7meg", 7e6), ("7MEG", 7e6), ("8g", 8e9), ("9t", 9e12), ("2mil", 50.8e-6),
    ("10uF", 10e-6), ("10UF", 10e-6), ("1kOhm", 1e3), ("1kohms", 1e3), ("4.7k", 4.7e3),
    ("2.2mH", 2.2e-3), ("100nF", 100e-9), ("1F", 1e-15), ("1Mohm", 1e-3), ("1megohm", 1e6),
    ("5V", 5.0), ("3A", 3.0), ("2mA", 2e-3), ("10H", 10.0), ("1s", 1.0), ("50Hz", 50.0),
    ("1kHz", 1e3), ("10ohm", 10.0), ("1e-3meg", 1e3), ("1megHz", 1e6),
])
def test_units(token, value):
    assert parse_value(token) == pytest.approx(value, rel=1e-14)


@pytest.mark.parametrize("token", ["10x", "1kq", "3uFF", "2megx", "1e", "5Q"])
def test_unknown_unit_suffix(token):
    with pytest.raises(ParseError, match="unknown unit suffix"):
        parse_value(token)


@pytest.mark.parametrize("token", ["abc", "1k5", "--1", "1..2", ""])
def test_not_a_number(token):
    with pytest.raises(ParseError, match="not a number"):
        parse_value(token)


def test_unknown_suffix_in_a_netlist_names_the_line():
    with pytest.raises(ParseError) as err:
        read_netlist("title\nR1 1 0 1k\nC1 1 0 10uQ\n")
    assert err.value.line == 3
    assert str(err.value).startswith("line 3: unknown unit suffix 'Q' in '10uQ'")


# --- tokens, comments, continuation -----------------------------------------------------------

def test_tokenize():
    assert tokenize("R1 a b {2 * (r + 1)}") == ["R1", "a", "b", "{2 * (r + 1)}"]
    assert tokenize("V1 a 0 pulse(0,1 , 2)") == ["V1", "a", "0", "pulse", "(", "0", "1", "2", ")"]
    assert tokenize(".param a = 'b*2' c=3") == [".param", "a", "=", "{b*2}", "c", "=", "3"]
    with pytest.raises(ParseError, match="unbalanced"):
        tokenize("R1 a b {1+2", line=7)
    with pytest.raises(ParseError, match="unbalanced"):
        tokenize("R1 a b 1}", line=7)


def test_title_comments_continuation():
    text = "\n".join([
        "R1 this is the title, not a resistor",       # 1
        "* a comment line",                          # 2
        "R1 in out 1k ; trailing comment",           # 3
        "C1 out 0",                                  # 4
        "* a comment between a card and its continuation",
        "+ 1u $ another comment",                    # 6
        "",                                          # 7
        "V1 in 0 DC 5 // and another",               # 8
        "  * indented comment",                      # 9
    ])
    title, cards, notes = split_cards(text)
    assert title == "R1 this is the title, not a resistor"
    assert [(c.line, c.tokens) for c in cards] == [
        (3, ["R1", "in", "out", "1k"]), (4, ["C1", "out", "0", "1u"]), (8, ["V1", "in", "0", "DC", "5"])]
    net = read_netlist(text)
    assert sorted(net.elements) == ["C1", "R1", "V1"]
    assert num(net.elements["C1"].values["C"]) == pytest.approx(1e-6)
    assert net.title == "R1 this is the title, not a resistor"
    assert not any("read as the title" in n for n in net.netlist_notes)
    for first in ("R1 in 0 1k", "V1 1 0 DC 5", ".tran 1u 1m"):
        net = read_netlist(first + "\nR2 a 0 1\n")
        assert "R1" not in net.elements and "V1" not in net.elements
        assert any("line 1: " in n and "read as the title" in n for n in net.netlist_notes), first


def test_continuation_without_a_card():
    with pytest.raises(ParseError) as err:
        read_netlist("title\n* comment\n+ 1k\n")
    assert err.value.line == 3


def test_dollar_inside_a_name_is_not_a_comment():
    net = read_netlist("t\nR1 a$b 0 1k\n")
    assert net.elements["R1"].terminals == ("a$b", "0")


def test_case_insensitive_names_nodes_and_keywords():
    net = read_netlist("t\nv1 IN gnd dc 2\nR1 in Out 1K\nc1 OUT GND 1U\n.TRAN 1U 1M\n.END\n")
    assert net.elements["v1"].terminals == ("IN", "0")
    assert net.elements["R1"].terminals == ("IN", "Out")     # first spelling of each node wins
    assert net.elements["c1"].terminals == ("Out", "0")
    assert num(net.elements["v1"].values["value"]) == 2.0
    assert net.tran.tstop == pytest.approx(1e-3)
    with pytest.raises(ParseError) as err:
        read_netlist("t\nR1 a 0 1\nr1 a 0 2\n")
    assert err.value.line == 3 and "duplicate element name" in str(err.value)


@pytest.mark.parametrize("ground", ["0", "gnd", "GND", "Ground"])
def test_ground_aliases(ground):
    net = read_netlist(f"t\nR1 a {ground} 1\n")
    assert net.elements["R1"].terminals == ("a", "0")


# --- element cards ----------------------------------------------------------------------------

def test_passive_elements_and_ic():
    net = read_netlist("t\nR1 1 2 2.2k\nL1 2 3 10mH ic=1m\nC1 3 0 47n IC=2.5\n")
    r, l, c = (net.elements[n] for n in ("R1", "L1", "C1"))
    assert isinstance(r, Resistor) and isinstance(l, Inductor) and isinstance(c, Capacitor)
    assert (num(r.values["R"]), num(l.values["L"]), num(c.values["C"])) == pytest.approx((2200, 0.01, 47e-9))
    assert l.terminals == ("2", "3")
    assert net.element_ic == {"L1": pytest.approx(1e-3), "C1": pytest.approx(2.5)}


def test_sources_dc_forms():
    net = read_netlist("t\nV1 a 0 3\nV2 b 0 DC 4\nI1 0 d 1m\nV4 e 0\n"
                       "R1 a 0 1\nR2 b 0 1\nR4 d 0 1\nR5 e 0 1\n")
    assert isinstance(net.elements["I1"], CurrentSource) and isinstance(net.elements["V1"], VoltageSource)
    vals = [num(net.elements[n].values["value"]) for n in ("V1", "V2", "I1", "V4")]
    assert vals == [3.0, 4.0, 1e-3, 0.0]
    assert net.elements["I1"].terminals == ("0", "d")
    assert any("V4 has no value; 0 assumed" in n for n in net.netlist_notes)


def test_source_waveforms_match_the_sources_module():
    net = read_netlist("""waveforms
V1 a 0 SIN(0.5 2 1k 0.2m 100 30)
V2 b 0 sin 0 1 500
V3 c 0 PULSE(-1 1 0.1m 10u 20u 0.3m 1m)
V4 d 0 PWL(0 0 0.2m 1 0.5m -1 1m 0)
I5 0 e DC 0 AC 1 0 SIN(0 1m 2k)
R1 a 0 1
R2 b 0 1
R3 c 0 1
R4 d 0 1
R5 e 0 1
""")
    times = np.linspace(0, 3e-3, 3001)
    pairs = {
        "V1": sine(0.5, 2, 1e3, 0.2e-3, 100, 30),
        "V2": sine(0, 1, 500),
        "V3": pulse(-1, 1, 0.1e-3, 10e-6, 20e-6, 0.3e-3, 1e-3),
        "V4": pwl([(0, 0), (0.2e-3, 1), (0.5e-3, -1), (1e-3, 0)]),
        "I5": sine(0, 1e-3, 2e3),
    }
    for name, ref in pairs.items():
        got = wave(net.elements[name].values["value"], times)
        assert np.max(np.abs(got - wave(ref, times))) < 1e-12, name
    assert net.ac_sources["I5"] == (1.0, 0.0)
    assert any("I5: the transient uses" in n for n in net.netlist_notes)


def test_spice_defaults_of_pulse_and_sin_follow_tran():
    net = read_netlist("t\nV1 a 0 PULSE(0 1 1m 0 0 0)\nV2 b 0 SIN(0 1)\nR1 a 0 1\nR2 b 0 1\n.tran 1e-4 5m\n")
    v = wave(net.elements["V1"].values["value"], [0.99e-3, 1.05e-3, 1.1e-3, 4.9e-3])
    assert v.tolist() == pytest.approx([0.0, 0.5, 1.0, 1.0])          # TR = tstep, PW = "tstop"
    w = wave(net.elements["V2"].values["value"], [1.25e-3])
    assert w[0] == pytest.approx(1.0)                                  # FREQ = 1/tstop = 200 Hz
    notes = " ".join(net.netlist_notes)
    assert "rise time = tstep" in notes and "1/tstop" in notes
    # no .tran: an ideal edge, with a note; SIN without frequency is an error
    net = read_netlist("t\nV1 a 0 PULSE(0 1 1m)\nR1 a 0 1\n")
    assert wave(net.elements["V1"].values["value"], [0.9e-3, 1.1e-3]).tolist() == [0.0, 1.0]
    assert any("ideal edge" in n for n in net.netlist_notes)
    with pytest.raises(ParseError) as err:
        read_netlist("t\nR1 a 0 1\nV2 a 0 SIN(0 1)\n")
    assert err.value.line == 3 and "needs a .tran" in str(err.value)


def test_coupling_card():
    net = read_netlist("t\nV1 1 0 1\nL1 1 0 1m\nL2 2 0 4m\nR2 2 0 10\nK12 l1 L2 0.5\n")
    k = net.elements["K12"]
    assert isinstance(k, MutualInductance)
    assert k.couples == ("L1", "L2") and num(k.values["k"]) == 0.5


def test_k_defined_before_its_inductors():
    net = read_netlist("t\nK1 L1 L2 0.9\nV1 1 0 1\nL1 1 0 1m\nL2 2 0 4m\nR2 2 0 10\n")
    assert net.elements["K1"].couples == ("L1", "L2")


# --- parameters -------------------------------------------------------------------------------

def test_params_and_expressions():
    net = read_netlist("""params
.param rbase=1k scale = 2
.param r2={rbase*scale} c0='1/(2*pi*1k*r2)'
.PARAM half=r2/2
R1 a 0 {rbase}
R2 a b {r2 + 500}
R3 b 0 {half}
C1 b 0 {c0}
V1 a 0 {2^3}
""")
    assert num(net.elements["R1"].values["R"]) == 1000
    assert num(net.elements["R2"].values["R"]) == 2500
    assert num(net.elements["R3"].values["R"]) == 1000
    assert num(net.elements["C1"].values["C"]) == pytest.approx(1 / (2 * math.pi * 1e3 * 2e3))
    assert num(net.elements["V1"].values["value"]) == 8
    assert net.params == {"rbase": 1e3, "scale": 2.0, "r2": 2e3, "c0": pytest.approx(7.957747e-8),
                          "half": 1e3}


def test_expression_functions():
    p = {"x": 4.0}
    assert evaluate("sqrt(x) + abs(-1) + max(1, 2) + min(3, x) + pow(2, 3)", p) == 2 + 1 + 2 + 3 + 8
    assert evaluate("ln(e) + log10(100) + exp(0) + 2**3 + 1meg/1k", p) == pytest.approx(1 + 2 + 1 + 8 + 1000)
    assert evaluate("-x + +x + 10 % 4", p) == 2


@pytest.mark.parametrize("card, message", [
    ("R1 a 0 {rx*2}", "unknown parameter 'rx'"),
    ("R1 a 0 {foo(2)}", "unknown function 'foo'"),
    ("R1 a 0 {2 +* 3}", "cannot read the expression"),
    ("R1 a 0 {1/0}", "division by zero"),
    ("R1 a 0 {[1]}", "unsupported syntax"),
    ("R1 a 0 {sqrt(-1)}", "sqrt"),
    ("R1 a 0 rval", "not a number"),
    (".param 2x=1", "not a valid parameter name"),
    (".param sqrt=1", "name of a function"),
    (".param a", "name=value"),
    (".param a= ", "needs a value"),
])
def test_param_errors(card, message):
    with pytest.raises(ParseError, match=message) as err:
        read_netlist(f"title\nV1 a 0 1\n{card}\n")
    assert err.value.line == 3


def test_param_order_matters():
    with pytest.raises(ParseError, match="unknown parameter 'b'") as err:
        read_netlist("t\n.param a={b*2}\n.param b=1\nR1 x 0 {a}\n")
    assert err.value.line == 2


# --- subcircuits ------------------------------------------------------------------------------

NESTED = """nested subcircuits
.param rglob=100
.subckt stage in out gnd_ params: r=1k c=1u
R1 in out {r}
C1 out gnd_ {c}
.ends stage
.subckt two in out
* an inner definition, visible only inside 'two'
.subckt half a b
R1 a b {rglob}
.ends
X1 in mid 0 stage r=2k
Xh mid m2 half
X2 m2 out 0 stage c=2u
.ends two
V1 in 0 1
Xa in o1 two
XB o1 o2 TWO
Rload o2 0 10k
.end
"""


def test_nested_subcircuits_prefix_names():
    net = read_netlist(NESTED)
    names = sorted(net.elements)
    assert names == sorted(["V1", "Rload",
                            "Xa.X1.R1", "Xa.X1.C1", "Xa.Xh.R1", "Xa.X2.R1", "Xa.X2.C1",
                            "XB.X1.R1", "XB.X1.C1", "XB.Xh.R1", "XB.X2.R1", "XB.X2.C1"])
    e = net.elements
    assert e["Xa.X1.R1"].terminals == ("in", "Xa.mid")
    assert e["Xa.X1.C1"].terminals == ("Xa.mid", "0")
    assert e["Xa.Xh.R1"].terminals == ("Xa.mid", "Xa.m2")
    assert e["Xa.X2.R1"].terminals == ("Xa.m2", "o1")
    assert e["XB.X2.R1"].terminals == ("XB.m2", "o2")
    assert num(e["Xa.X1.R1"].values["R"]) == 2000      # instance override
    assert num(e["Xa.X2.R1"].values["R"]) == 1000      # default
    assert num(e["Xa.X2.C1"].values["C"]) == pytest.approx(2e-6)
    assert num(e["XB.Xh.R1"].values["R"]) == 100       # global parameter inside a subcircuit
    assert set(net.graph.nodes) == {"0", "in", "Xa.mid", "Xa.m2", "o1", "XB.mid", "XB.m2", "o2"}


def test_subckt_local_param_and_k_inside():
    net = read_netlist("""t
.subckt xf p1 p2 s1 s2 params: ratio=4
.param lp=1m
L1 p1 p2 {lp}
L2 s1 s2 {lp*ratio^2}
K1 L1 L2 0.99
.ends
X1 a 0 b 0 xf
X2 c 0 d 0 xf ratio=2
V1 a 0 SIN(0 1 1k)
V2 c 0 SIN(0 1 1k)
R1 b 0 100
R2 d 0 100
""")
    assert num(net.elements["X1.L2"].values["L"]) == pytest.approx(16e-3)
    assert num(net.elements["X2.L2"].values["L"]) == pytest.approx(4e-3)
    assert net.elements["X1.K1"].couples == ("X1.L1", "X1.L2")
    assert net.elements["X2.K1"].couples == ("X2.L1", "X2.L2")


def test_ngspice_style_inductor_names_in_k():
    net = read_netlist("t\n.subckt ind a b\nL1 a b 1m\n.ends\nX1 1 0 ind\nX2 2 0 ind\nV1 1 0 1\nR2 2 0 1\n"
                       "K1 L.X1.L1 x2.l1 0.3\n")
    assert net.elements["K1"].couples == ("X1.L1", "X2.L1")


@pytest.mark.parametrize("text, line, message", [
    ("t\n.subckt s a b\nR1 a b 1\n.ends\nX1 1 s\nV1 1 0 1\n", 5, "has 2 port node(s) (a b), the instance gives 1"),
    ("t\n.subckt s a b\nR1 a b 1\n.ends\nX1 1 2 3 s\nV1 1 0 1\n", 5, "the instance gives 3"),
    ("t\nV1 1 0 1\nX1 1 0 nosuch\n", 3, "no subcircuit named 'nosuch'"),
    ("t\n.subckt s a b\nX1 a b s\n.ends\nX1 1 0 s\n", 3, "instantiates itself"),
    ("t\n.subckt s a b\nR1 a b 1\nV1 1 0 1\n", 2, "has no .ends"),
    ("t\n.subckt s a b\nR1 a b 1\n.ends other\n", 4, "closes subcircuit 's'"),
    ("t\nR1 a 0 1\n.ends\n", 3, ".ends without .subckt"),
    ("t\n.subckt s a a\n.ends\n", 2, "names a port node twice"),
    ("t\n.subckt s a 0\n.ends\n", 2, "cannot be a port node"),
    ("t\n.subckt\n.ends\n", 2, "needs a name"),
    ("t\n.subckt s a b\n.ends\n.subckt S a b\n.ends\n", 4, "defined twice"),
    ("t\n.subckt s a b params: r=1\nR1 a b {r}\n.ends\nX1 1 0 s q=2\n", 5, "has no parameter 'q'"),
    ("t\n.subckt s a b\n.subckt inner a b\nR1 a b 1\n.ends\n.ends\nX1 1 0 inner\n", 7,
     "no subcircuit named 'inner'"),
    ("t\n.subckt s a b\n.tran 1u 1m\n.ends\n", 3, "inside subcircuit 's'"),
    ("t\n.subckt s a b\nR1 a b {undefined_p}\n.ends\nV1 1 0 1\nX1 1 0 s\n", 3, "unknown parameter"),
    ("t\n.subckt s a b\nQ1 a b 0 qmod\n.ends\nX1 1 0 s\n", 3, "bipolar transistor"),
])
def test_subckt_errors(text, line, message):
    with pytest.raises(ParseError) as err:
        read_netlist(text)
    assert err.value.line == line, str(err.value)
    assert message in str(err.value)


def test_instance_names_are_unique():
    with pytest.raises(ParseError, match="duplicate element name 'x1': 'X1' is on line 5") as err:
        read_netlist("t\n.subckt s a b\nR1 a b 1\n.ends\nX1 1 0 s\nx1 2 0 s\n")
    assert err.value.line == 6


# --- dot cards --------------------------------------------------------------------------------

def test_tran_forms():
    assert read_netlist("t\nR1 a 0 1\n.tran 1u 2m\n").tran == TranCard(tstep=1e-6, tstop=2e-3, tstart=0.0,
                                                                       tmax=None, uic=False)
    tr = read_netlist("t\nR1 a 0 1\n.param ts=5m\n.tran 1u {ts} 1m 2u UIC\n").tran
    assert tr == TranCard(tstep=1e-6, tstop=5e-3, tstart=1e-3, tmax=2e-6, uic=True)
    assert read_netlist("t\nR1 a 0 1\n").tran is None


@pytest.mark.parametrize("card, message", [
    (".tran 1u", "tstep tstop"),
    (".tran 1u 1m 0 1u 5", "tstep tstop"),
    (".tran -1u 1m", "positive"),
    (".tran 1u 1m 2m", "tstart"),
    (".tran 1u 1m 0 0", "tmax"),
])
def test_tran_errors(card, message):
    with pytest.raises(ParseError, match=message) as err:
        read_netlist(f"t\nR1 a 0 1\n{card}\n")
    assert err.value.line == 3


def test_ic_card():
    net = read_netlist("t\nV1 in 0 1\nR1 in OUT 1k\nC1 out 0 1u\n.ic v(out)=0.25 V(in)={1/2}\n")
    assert net.initial_voltages == {"OUT": 0.25, "in": 0.5}
    for card, message in ((".ic v(nowhere)=1", "no node named 'nowhere'"), (".ic v(0)=1", "ground"),
                          (".ic out=1", "v(node)=value"), (".ic", "needs")):
        with pytest.raises(ParseError, match=re.escape(message)) as err:
            read_netlist(f"t\nV1 in 0 1\nR1 in out 1k\n{card}\n")
        assert err.value.line == 4


def test_skipped_cards_leave_notes():
    net = read_netlist("""t
V1 1 0 1
R1 1 0 1k
.options reltol=1e-6
.op
.print tran v(1)
.control
run
plot v(1)
.endc
.end
R2 this is after the end and ignored
""")
    assert sorted(net.elements) == ["R1", "V1"]
    notes = "\n".join(net.netlist_notes)
    assert "line 4: .options skipped" in notes
    assert net.analyses == [".op"]
    assert "line 6: .print skipped" in notes
    assert "line 7: .control ... .endc block skipped" in notes
    assert "card(s) after it are ignored" in notes


def test_title_card():
    assert read_netlist("first line\n.title the real title\nR1 1 0 1\n").title == "the real title"


@pytest.mark.parametrize("card, message", [
    ("D1 1 0 dmod", "no .model named 'dmod'"),
    ("Q1 1 2 0 npn", "bipolar transistor"),
    ("M1 1 2 0 0 nmos", "MOSFET"),
    ("E1 1 0 2 0 POLY(1) 2 0 0 1", "POLY, VALUE= and TABLE forms are not supported"),
    ("F1 1 0 R1 2", "'R1' is not a voltage source"),
    ("G1 1 0 2 0", "a VCCS card is"),
    ("H1 1 0 V1", "a CCVS card is"),
    ("B1 1 0 V={time}", "behavioral source"),
    ("S1 1 0 2 0 sw", "switch"),
    ("T1 1 0 2 0 z0=50", "transmission line"),
    ("J1 1 2 0 jmod", "JFET"),
    (".model qmod NPN(BF=100)", "device models of type NPN are not supported"),
    (".model dmod D(IS=1e-14 CJ=2p XYZ=1)", "XYZ is not a diode parameter"),
    (".ac dec 10 1k", ".ac needs DEC|OCT|LIN points fstart fstop"),
    (".include other.cir", "file inclusion"),
    (".lib models.lib", "libraries"),
    (".func f(x) {x}", "user functions"),
    (".global vdd", "global nodes"),
    (".foo bar", "unknown control card '.foo'"),
    (".endc", ".endc without .control"),
    (".control", ".control block without .endc"),
    ("V2 2 0 EXP(0 1 0 1m)", "EXP waveform is not supported"),
    ("V2 2 0 SFFM(0 1 1k 5 100)", "SFFM waveform is not supported"),
    ("V2 2 0 PULSE(0 1", "missing ')'"),
    ("V2 2 0 SIN(0)", "takes 2 to 6 values"),
    ("V2 2 0 PULSE(0 1 2 3 4 5 6 7)", "takes 2 to 7 values"),
    ("V2 2 0 PWL(0 1 2)", "time-value pairs"),
    ("V2 2 0 PWL(0 1 2 3 1 4)", "increase"),
    ("V2 2 0 PULSE(0 1 0 1m 1m 1m 2m)", "longer than the period"),
    ("V2 2 0 SIN(0 1 1k) PWL(0 1)", "more than one transient waveform"),
    ("V2 2 0 1 2", "unexpected value"),
    ("V2 2 0 foo", "cannot read 'foo'"),
    ("V2 2", "a source card is"),
    ("R2 2 0", "a resistor card is"),
    ("R2 2 0 1k tc1=0.01", "unsupported resistor parameter 'tc1'"),
    ("C2 2 0 1u 5", "a capacitor card is"),
    ("R2 2 0 -1k", "not physical"),
    ("L3 2 0 0", "not physical"),
    ("R2 2 2 1k", "shorted to itself"),
    ("K1 L1 L9 0.5", "no inductor named 'L9'"),
    ("K1 L1 R1 0.5", "'R1' is not an inductor"),
    ("K1 L1 L1 0.5", "couples 'L1' with itself"),
    ("K1 L1 L2", "a coupling card is"),
    ("K1 L1 L2 1.5", "must lie in [-1, 1]"),
    ("1R 2 0 1", "cannot read the card"),
])
def test_errors_carry_the_line(card, message):
    text = f"title\nV1 1 0 1\nR1 1 0 1\nL1 1 3 1m\nL2 3 0 1m\n* comment\n{card}\nR9 2 0 1\n"
    with pytest.raises(ParseError) as err:
        read_netlist(text)
    assert err.value.line == 7, str(err.value)
    assert message in str(err.value)
    assert str(err.value).startswith("line 7: ")


def test_reading_from_path_and_file(tmp_path):
    text = "file netlist\nV1 1 0 1\nR1 1 0 1k\n"
    p = tmp_path / "a.cir"
    p.write_text(text)
    for source in (p, str(p), io.StringIO(text)):
        assert sorted(read_netlist(source).elements) == ["R1", "V1"]
    with pytest.raises(ParseError, match="not found"):
        read_netlist(str(tmp_path / "missing.cir"))
    with pytest.raises(ParseError, match="not found"):
        read_netlist("no_such_file.txt")
    with pytest.raises(ParseError, match="no elements"):
        read_netlist("only a title\n* and a comment\n.tran 1u 1m\n")
    with pytest.raises(ParseError, match="path or the netlist text"):
        read_netlist(42)


def test_exported_from_netdyn_and_simulates():
    net = netdyn.read_netlist("rc\nV1 in 0 1\nR1 in out 1k\nC1 out 0 1u\n.tran 10u 2m uic\n")
    sol = netdyn.simulate(net, None, t_eval=np.linspace(0, 2e-3, 21))   # uic: from zero
    assert sol.voltage("out") == pytest.approx(1 - np.exp(-sol.t / 1e-3), abs=1e-6)
    net.tran = dataclasses.replace(net.tran, uic=False)  # SPICE's default: from the DC operating point, where C1 is charged already
    assert netdyn.simulate(net, None, t_eval=np.linspace(0, 2e-3, 21)).voltage("out") == pytest.approx(1.0, abs=1e-9)


# --- writing decks ----------------------------------------------------------------------------

from netdyn.components.electrical import CoupledInductors, IdealTransformer  # noqa: E402
from netdyn.errors import NetdynError  # noqa: E402
from netdyn.io import spice_names, write_netlist  # noqa: E402


def test_write_then_read_is_the_same_circuit():
    text = """round trip
.param r0=2k
.subckt rc a b
R1 a b {r0}
C1 b 0 10n ic=0.5
.ends
V1 in 0 PULSE(0 5 1u 2u 3u 10u 20u)
I1 0 in SIN(0 1m 10k 0 0 90)
V2 x 0 PWL(0 0 1m 1)
X1 in out rc
L1 out 0 1m ic=2m
L2 x 0 3m
K1 L1 L2 0.7
.ic v(out)=0.1
.tran 1u 1m 0 100n uic
"""
    a = read_netlist(text)
    deck = write_netlist(a)
    b = read_netlist(deck)
    names = spice_names(a)["elements"]
    assert names["X1.R1"] == "RX1.R1" and names["X1.C1"] == "CX1.C1"
    assert b.tran == a.tran
    assert b.initial_voltages == {"out": 0.1}
    assert b.element_ic == {"CX1.C1": 0.5, "L1": 0.002}
    times = np.linspace(0, 1e-3, 4001)
    for name, el in a.elements.items():
        other = b.elements[names[name]]
        assert type(other) is type(el)
        assert [str(x) for x in other.terminals] == [str(x) for x in el.terminals] or type(el) is MutualInductance
        for key, value in el.values.items():
            if t in sp.sympify(value).free_symbols:
                assert np.max(np.abs(wave(other.values[key], times) - wave(value, times))) < 1e-12, name
            else:
                assert num(other.values[key]) == pytest.approx(num(value), rel=1e-15), name
    assert b.elements["K1"].couples == ("L1", "L2")


def test_write_netlist_names_and_errors():
    from netdyn.components.translational import Mass

    net = netdyn.Network("names")
    net.add(VoltageSource("supply", "in", "gnd", 1.0), Resistor("load", "in", "n 2", 10),
            Resistor("Rx", "n 2", "0", 5))
    deck = write_netlist(net)
    assert "Vsupply in 0 DC 1" in deck and "Rload in n_2 10" in deck and "Rx n_2 0 5" in deck
    assert spice_names(net)["nodes"] == {"in": "in", "0": "0", "n 2": "n_2"}

    clash = netdyn.Network()
    clash.add(Resistor("r1", "a", "0", 1), Resistor("R1", "a", "0", 2))
    with pytest.raises(NetdynError, match="both become 'R1'|both become 'r1'"):
        write_netlist(clash)
    nodes = netdyn.Network()
    nodes.add(Resistor("R1", "A", "0", 1), Resistor("R2", "a", "0", 2))
    with pytest.raises(NetdynError, match="case-insensitive"):
        write_netlist(nodes)
    mech = netdyn.Network()
    mech.add(Mass("m1", "x", 1.0))
    with pytest.raises(NetdynError, match="m1: Mass has no SPICE equivalent"):
        write_netlist(mech)
    nonlinear = netdyn.Network()
    nonlinear.add(Resistor("Rn", "a", "0", dissipation=lambda i: i**4))
    with pytest.raises(NetdynError, match="no SPICE equivalent"):
        write_netlist(nonlinear)


def test_write_netlist_symbolic_values_need_params():
    R = sp.Symbol("R", positive=True)
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", sp.Symbol("V0") * sine(0, 1, 50)), Resistor("R1", "a", "0", R))
    with pytest.raises(NetdynError, match=r"V1: value = .* has no numeric value \(V0\)"):
        write_netlist(net)
    with pytest.raises(NetdynError, match=r"R1: R = R has no numeric value \(R\)"):
        write_netlist(net, params={"V0": 2})
    deck = write_netlist(net, params={"R": 50, "V0": 2})
    assert "R1 a 0 50" in deck
    assert deck.splitlines()[1].startswith("BV1 a 0 V={")     # V0 * SIN(...) is not a SIN card


def test_write_netlist_two_ports():
    net = netdyn.Network("two ports")
    net.add(VoltageSource("V1", "p", "0", 1.0), CoupledInductors("T1", "p", "0", "s", "0", L1=1e-3, L2=4e-3, M=1e-3),
            Resistor("R2", "s", "0", 10), IdealTransformer("X", "s", "0", "u", "0", n=3),
            Resistor("R3", "u", "0", 1))
    lines = write_netlist(net).splitlines()
    assert "LT1_1 p 0 0.001" in lines and "LT1_2 s 0 0.004" in lines and "KT1 LT1_1 LT1_2 0.5" in lines
    assert "VX_sense u EX_mid 0" in lines and "EX EX_mid 0 s 0 3" in lines and "FX s 0 VX_sense -3" in lines


def test_write_netlist_tran_argument():
    net = read_netlist("t\nV1 a 0 1\nR1 a 0 1\n.tran 1u 1m\n")
    assert ".tran 1e-06 0.001" in write_netlist(net)
    assert ".tran 2e-06 0.005 0 1e-07" in write_netlist(net, tran=(2e-6, 5e-3, 0, 1e-7))
    net.tran = None
    assert ".tran" not in write_netlist(net)


def test_run_ngspice_reports_a_missing_ngspice(monkeypatch):
    from netdyn.io import run_ngspice
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(NetdynError, match="ngspice is not installed"):
        run_ngspice("t\nV1 1 0 1\nR1 1 0 1\n", ["v(1)"], tstop=1e-3, tstep=1e-5)
