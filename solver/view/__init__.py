"""Pictures and the viewer: SVG boards (:mod:`solver.view.svg`) and ``rotary serve`` (:mod:`solver.view.web`)."""
