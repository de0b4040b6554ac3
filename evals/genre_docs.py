"""The second-genre eval's documents (not filings): fetched from Debian, checked, ingested.

    python evals/genre_docs.py [--dir DIR] [--user genre] [--no-ingest]
    (THOTQEN_HOME selects the data dir, e.g. THOTQEN_HOME=/work/genrehome)

Fifty-six documents (a standard, a history report, three manuals, a constitution, a licence, a
specification, release notes, an FAQ, a scientific paper, a style guide, a tutorial, a slide deck,
protocol conventions, a HOWTO, a command reference (man page), a design document, a desktop
application's user's guide, a glossary, a language definition, a limits reference, a gallery of
worked examples, a comparison document, a game's guidebook, an API reference page, a newsletter, a
migration guide, a file-format specification, an essay, a hardware instrument's manual, a board
game's rules, a statistics package's vignette on an ecological topic, a well-known program's NEWS
file, a puzzle collection's manual, a security advisory list, a project's governance document, an
almanac of historical anniversaries, an installation guide, a telephone area-code directory, a
satirical dictionary, a reference table of the chemical elements, a historical declaration, a
timekeeping data file (the table of leap seconds), a collection of recipes (homebrew beer), a
units-of-measurement database, a scripture in verse translation (a Buddhist anthology), a data set's
README, a novel, a bibliography database (BibTeX), a genealogy file (GEDCOM), a time zone database
source file, a collection of chess studies (PGN), an anthology of songs and poems (a fortune file), a Debian
package's changelog, a known-problems list (a troubleshooting guide); the
FAQ and the third manual added with held-back batch 5, the paper and the style guide with batch 6, the
tutorial and the slide deck with batch 7, the protocol conventions (ICCCM)
and the HOWTO (Python's Unicode HOWTO) with batch 8, the command reference (bash(1)) and the design
document (Git's hash function transition) with batch 9, the user's guide (Grace, the xmgrace
plotting program) and the glossary (PostgreSQL 15's) with batch 10, the language definition (the R
Language Definition) and the limits reference (SQLite's "Limits In SQLite" page) with batch 11, the
gallery (The xtable Gallery, R's xtable package) and the comparison document (Vim's "Differences
between Vim and Vi") with batch 12, the guidebook (NetHack's Guidebook, A Guide to the Mazes of
Menace) and the API reference page (Python's time module) with batch 13, the newsletter (LaTeX News,
Issues 1-36) and the migration guide (The Rust Edition Guide) with batch 14, the file-format
specification (SRF, the Sequence Read Format for DNA sequence data) and the essay (LilyPond's Essay
on automated music engraving) with batch 15, the instrument's manual (the expEYES Junior User's
Manual, a USB laboratory interface for physics experiments) and the board game's rules (the GNU
Shogi manual: the rules of shogi, Japanese chess, with handicaps, a sample game and the variants)
with batch 16, the vignette (Vegan: ecological diversity, R's vegan package: diversity indices,
rarefaction, species abundance and accumulation models and species pool estimates for community
ecology) and the NEWS file (GNU sed's NEWS, the noteworthy changes of each release from 3.0 to 4.9)
with batch 17, the puzzle collection's manual (Simon Tatham's Portable Puzzle Collection: the rules,
controls and parameters of its 40 one-player puzzles) and the security advisory list (SQLite's
Vulnerabilities page: its policy toward CVEs and the status and fix of each recent one) with batch 18,
the governance document (Organization of the Django Project: the roles, prerogatives, membership and
election of its Mergers, Releasers and technical board) and the almanac (the calendar program's
calendar.history: historical events listed by the day of the year, with their years) with batch 19, the
installation guide (The TeX Live Guide 2022: installing the TeX Live distribution, its schemes,
directories, options and post-install steps, and its release history) and the area-code directory
(na.phone of GNU miscfiles: the North American telephone area codes with the cities and states or
provinces each serves) with batch 20, the satirical dictionary (Ambrose Bierce's The Devil's
Dictionary, a classic of American literature: mock definitions with verses credited to invented
poets) and the table of the elements (The Elements database: each element's symbol, atomic number,
atomic weight, properties and discovery) with batch 21, the historical declaration (the Declaration of
Independence of the Thirteen Colonies, July 4, 1776, with its signers listed by state) and the
timekeeping data file (the IERS leap-seconds.list shipped in tzdata: comments on atomic and
astronomical time, then each leap second since 1972 with the TAI-UTC difference it brought) with batch
22, the recipes (QBrew's Brewing Primer, Some Recipes to Play With: nine beer recipes, each with its
notes and ingredient table) and the units database (GNU units' definitions.units: the weights and
measures, physical constants and their history, with comments) with batch 23, the scripture (The
Dhammapada, John Richards's 1993 translation from the Pali: his note on the anthology and its Chinese,
Gandhari and Sanskrit relatives, then its 423 verses in 26 chapters) and the data set's README
(Fashion-MNIST's README: Zalando's article images as a drop-in replacement for MNIST, their files and
labels, how to load them, and a table of submitted benchmark results) with batch 24, the novel (Mark
Twain's The Adventures of Tom Sawyer, 1876, the Project Gutenberg text: the author's preface, then 35
chapters and a conclusion) and the bibliography database (biblatex-examples.bib, the biblatex package's
example BibTeX file: 92 entries of 15 types, from articles, books and collections to patents, reports,
theses and online sources, most with an annotation on their fields, some with abstracts) with batch 25, the
genealogy file (Gramps' sample GEDCOM file: a Smith family over eight generations, from Sweden and Denmark to
California, its 42 people with their births, christenings, deaths and places, 15 families, sources,
repositories and notes, one a biography of an emigrant) and the time zone database source file (the tz
database's africa file, release 2021e: each African country's zones and daylight-saving rules with the
maintainers' commentary quoting laws, gazettes, news reports and correspondents) with batch 26, the
chess studies (Beautiful Chess Studies (1), a lichess study shipped with PyChess: 63 endgame studies by their
composers and years, from Loyd, 1860 to Benko, 2003, each a PGN game with its position, its solution and
annotations on the moves, the traps and the variations) and the anthology (fortune's songs-poems file: 720
verses, from Burns, Blake and Tolkien to song lyrics, hacker parodies and epitaphs, most credited to their
authors, with three entries of Stephen Pile's The Book of Heroic Failures on bad poets) with batch 27, the
changelog (debianutils' changelog.Debian: 246 uploads of the Debian-specific utilities, which, run-parts, savelog,
tempfile, installkernel, ischroot and the former mkboot, from Guy Maor's initial release of 18 April 1996 to 2023,
each with its changes, the bugs it closes and its uploader's name and date) and the known-problems list (GNU
Emacs 28.2's etc/PROBLEMS: the problems met in building and running Emacs, each with its symptom, its cause and its
workaround, from startup failures and crash bugs to fonts, X, terminals, MS-Windows, Cygwin and legacy systems)
with batch 28), each one file of a Debian bookworm package, all under licences that allow redistribution (recorded
below, from the package's copyright file). Each is taken from the package's
.deb (`apt-get download PKG=VERSION`, no root; `dpkg-deb -x`), or from the installed file when it is
the same bytes, gunzipped where the package ships it compressed (gzip, or dictd's dictzip .dz), given
the name below and checked against its sha256: a different file stops the script.
Then `thotqen ingest` ingests them all for --user. Nothing is committed but this list.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Doc:
    name: str  # the file name the product sees (the questions' "document")
    genre: str
    package: str
    version: str
    member: str  # path inside the .deb; ".gz" (and dictzip's ".dz", gzip with a chunk table) is gunzipped
    sha256: str  # of the file as ingested
    licence: str


DOCS = (
    Doc("fhs-3.0.pdf", "standard (Filesystem Hierarchy Standard 3.0, 50 pages)", "debian-policy", "4.6.2.0",
        "usr/share/doc/debian-policy/fhs/fhs-3.0.pdf.gz",
        "53d239e569a2d7b31a74fa09d585368c0f5a164e4624723fa2894660dd10fd23",
        "FHS: free redistribution with the copyright notice (The Linux Foundation); package GPL-2+"),
    Doc("project-history.en.pdf", "report (A Brief History of Debian, 27 pages)", "debian-history", "2.28",
        "usr/share/doc/debian-history/docs/project-history.en.pdf",
        "d3d263affc69ec9c994fe1d06b3cf7dddb78f84e24849d87a4aefe3a4ed15e77", "GPL-2+"),
    Doc("maint-guide.en.pdf", "manual (Debian New Maintainers' Guide, 63 pages)", "maint-guide", "1.2.53",
        "usr/share/doc/maint-guide/maint-guide.en.pdf",
        "0b94abf28167fb3fe59db3d03f99b5faa50d9f6f696a7864825c5d0378ba27ef", "GPL-2+"),
    Doc("feynmf-manual.pdf", "manual (FeynMF, drawing Feynman diagrams with LaTeX, 44 pages)", "feynmf", "1.08-14",
        "usr/share/doc/feynmf/feynmf.pdf",
        "ec14169464c6d9272359e35f03e91c9b16451e12ea0725f12b7a0f555e64765c", "GPL-2+"),
    Doc("debian-constitution.txt", "legal/governance (Constitution for the Debian Project v1.9)", "debian-history",
        "2.28", "usr/share/doc/debian-history/constitution.txt.gz",
        "d39c2237d25127585f306a65a0166931d96e9bee67f2d983eae2d6fd57674c67", "GPL-2+"),
    Doc("MPL-2.0.txt", "licence (Mozilla Public License 2.0)", "base-files", "12.4+deb12u15",
        "usr/share/common-licenses/MPL-2.0",
        "fab3dd6bdab226f1c08630b1dd917e11fcb4ec5e1e020e2c16f83a0a13863e85",
        "the licence text itself (verbatim copying allowed); package GPL"),
    Doc("copyright-format-1.0.html", "specification (machine-readable debian/copyright format 1.0)",
        "debian-policy", "4.6.2.0", "usr/share/doc/debian-policy/copyright-format-1.0.html",
        "db44ad348eb96d36388e515e5e091bd155b909eea8adeb17d6ff6935f0732d54", "GPL-2+ (debian-policy)"),
    Doc("latexmk-changes.txt", "release notes (latexmk's list of main changes, v3.04 to 4.79)", "latexmk",
        "1:4.79-1", "usr/share/doc/latexmk/changelog.gz",
        "566f08eb1e711a0254028a65aebff62a9dd58eb68c440d4c768db4654dfcf480", "GPL-2+"),
    Doc("debian-faq.pdf", "FAQ (The Debian GNU/Linux FAQ, 73 pages; added with held-back batch 5)", "debian-faq",
        "11.1", "usr/share/doc/debian/FAQ/debian-faq.en.pdf.gz",
        "ea67ca925863324d97a30b5c926aed95efc687c689aa16788c9bed54525c0b47",
        "verbatim and modified copies allowed with the permission notice (Software in the Public Interest)"),
    Doc("developers-reference.pdf", "manual (Debian Developer's Reference 12.18, 114 pages; added with batch 5)",
        "developers-reference", "12.18", "usr/share/developers-reference/developers-reference.pdf",
        "88e5ac4d15444fd3adb821dc863bd91b820e99a27e65728e74975ab1752652f5", "GPL-2"),
    Doc("sandwich-clustered-covariances.pdf",
        "scientific paper (Zeileis, Koell, Graham: clustered covariances in R, JSS 2020, 36 pages; batch 6)",
        "r-cran-sandwich", "3.0-2-1", "usr/lib/R/site-library/sandwich/doc/sandwich-CL.pdf",
        "f3a765482a629c8c9369020d13632ec5c37520df17e22266eb9e2928270e94bb", "GPL-2"),
    Doc("gnu-coding-standards.pdf", "style guide (GNU Coding Standards, updated 2021-08-17, 90 pages; batch 6)",
        "gnu-standards", "2022.03.23-0.1", "usr/share/doc/gnu-standards/standards.pdf.gz",
        "7986330133c982d8b35e14c42f847bf7d19afdc2a080ebf8db9b223c0888021f",
        "GFDL-1.3+, no Invariant Sections, no Front-Cover or Back-Cover Texts (FSF)"),
    Doc("R-intro.pdf", "tutorial (An Introduction to R, for R 4.2.2 Patched 2022-11-10, 113 pages; batch 7)",
        "r-doc-pdf", "4.2.2.20221110-2", "usr/share/R/doc/manual/R-intro.pdf",
        "337ccd0b490b1e66f7e783b45f4588d0599730b4206c0c051edfe1419c568c51",
        "verbatim and modified copies allowed with the permission notice (Venables, Smith, R Core Team); "
        "package GPL-2"),
    Doc("packaging-tutorial.pdf", "slides (Debian Packaging Tutorial 0.29, Beamer deck, 89 slides; batch 7)",
        "packaging-tutorial", "0.29", "usr/share/doc/packaging-tutorial/packaging-tutorial.pdf",
        "cc7c8684cf47b66bbec047f2a0d074e5a326848d8f9de8ab17daa19759e801ae",
        "GPL-3+ or CC-BY-SA-3.0 (Lucas Nussbaum)"),
    Doc("icccm.pdf",
        "protocol conventions (Inter-Client Communication Conventions Manual 2.0, X Consortium Standard, "
        "75 pages; batch 8)",
        "xorg-docs", "1:1.7.1-1.2", "usr/share/doc/xorg-docs/icccm/icccm.pdf.gz",
        "c78df78fcf6ecd1f8da7aff3976ac23eaf0a6479bf8527836a3ac9eacaabd377",
        "MIT/X Consortium permission notice (X Consortium) and Sun Microsystems' permission to copy and "
        "distribute; package: the X.Org licences (MIT/X style)"),
    Doc("python-unicode-howto.html", "HOWTO (Python 3.11.2 Unicode HOWTO, release 1.12, one HTML page; batch 8)",
        "python3.11-doc", "3.11.2-6+deb12u9", "usr/share/doc/python3.11/html/howto/unicode.html",
        "8a74dd6bbadde1d7f75e88e1d2be96bc3654d0ee46f10ce24e739be23f2e447a",
        "Python Software Foundation License Version 2 (PSF)"),
    Doc("bash-manpage.pdf",
        "command reference (the bash(1) manual page, GNU Bash 5.2, 2022 September 19, typeset by groff, "
        "87 pages; batch 9)",
        "bash-doc", "5.2.15-2", "usr/share/doc/bash/bash.pdf",
        "ebd1361fe662e7e6b7386da02986bda05a434f85667939f72356fa86de19dd6d",
        "GPL-3+ (Free Software Foundation)"),
    Doc("git-hash-function-transition.html",
        "design document (Git hash function transition: the plan to move from SHA-1 to SHA-256, one HTML "
        "page; batch 9)",
        "git-doc", "1:2.39.5-0+deb12u3", "usr/share/doc/git-doc/technical/hash-function-transition.html",
        "59b2e2d0af85d5ff1c3e6b34be12fb64a9f98261a3cc1c39089a5e58d26d4f8e",
        "GPL-2 (Linus Torvalds and others)"),
    Doc("grace-users-guide.pdf",
        "user's guide of a desktop application (Grace User's Guide for Grace-5.1.25, the xmgrace 2D "
        "plotting program, 15.02.2015, 61 pages; batch 10)",
        "grace", "1:5.1.25-13", "usr/share/doc/grace/UsersGuide.pdf.gz",
        "e336d21193088fc83c10904b6c4b78c1a082030b6117837340346ca422ffa8b2",
        "GPL-2+ (Paul J Turner; Grace Development Team)"),
    Doc("postgresql-15-glossary.html",
        "glossary (PostgreSQL 15 documentation, Appendix M. Glossary, one HTML page; batch 10)",
        "postgresql-doc-15", "15.20-0+deb12u1", "usr/share/doc/postgresql-doc-15/html/glossary.html",
        "4bdd08559c8890565ec909c1312c7e61ca68c5e6bc3334f112baeea88b097670",
        "PostgreSQL License (BSD/MIT-style permission to use, copy, modify and distribute; PostgreSQL "
        "Global Development Group, The Regents of the University of California)"),
    Doc("R-lang.pdf",
        "language definition (R Language Definition, the programmers' reference manual of the R language, "
        "for R 4.2.2 Patched 2022-11-10, 69 pages; batch 11)",
        "r-doc-pdf", "4.2.2.20221110-2", "usr/share/R/doc/manual/R-lang.pdf",
        "4a6120ba505021d7c208078b575fe3f5d5dc91636dcf17de8a4208adda90d7dc",
        "verbatim and modified copies allowed with the permission notice (R Core Team); package GPL-2"),
    Doc("sqlite-limits.html",
        "limits reference (Limits In SQLite: the implementation limits, their defaults, hard bounds and "
        "compile-time and run-time settings, SQLite 3.40.1 documentation, one HTML page; batch 11)",
        "sqlite3-doc", "3.40.1-2+deb12u2", "usr/share/doc/sqlite3/limits.html",
        "c8ce36be3280ea10a22db68a99643f5b7eaa0f7064685f301e04b734f4b20cac",
        "public domain (D. Richard Hipp)"),
    Doc("xtable-gallery.pdf",
        "gallery of worked examples, a cookbook (The xtable Gallery: tables made with the R package xtable "
        "1.8-4 and the code that makes them, Jonathan Swinton and others, April 21, 2019, 29 pages; batch 12)",
        "r-cran-xtable", "1:1.8-4-2", "usr/lib/R/site-library/xtable/doc/xtableGallery.pdf",
        "151023b27c2279437ed721b09d9e97920d332a099b8a138fea0a5529006caed4",
        "GPL-2 (David B. Dahl)"),
    Doc("vim-vi-differences.txt",
        "comparison document (Differences between Vim and Vi, vi_diff.txt of the Vim 9.0 reference manual, "
        "last change 2022 Apr 03, plain text; batch 12)",
        "vim-runtime", "2:9.0.1378-2+deb12u2", "usr/share/vim/vim90/doc/vi_diff.txt",
        "2ec06d2ad3a58f4094c9009bcb70e2d2ebfe94648a91f1dcda4460774e66b4ba",
        "OPL-1+, no license options exercised (Open Publication License; Bram Moolenaar)"),
    Doc("nethack-guidebook.txt",
        "game's guidebook, a player's manual (A Guide to the Mazes of Menace: Guidebook for NetHack 3.6, "
        "original version by Eric S. Raymond, edited and expanded by Mike Stephenson and others, March 8, "
        "2020, plain text, 93 pages; batch 13)",
        "nethack-common", "3.6.6-3+b2", "usr/share/doc/nethack-common/Guidebook.txt.gz",
        "16b17b8bf014cdaa2ab7206146fe1848c615b171f398be340ce7fabf13106628",
        "NGPL, the NetHack General Public License: copies may be given away and distributed verbatim with "
        "the licence (M. Stephenson, Stichting Mathematisch Centrum, NetHack Development Team)"),
    Doc("python-time-module.html",
        "API reference page (time - Time access and conversions: the Python 3.11.2 standard library "
        "reference of the time module's functions, clock constants and timezone constants, one HTML page; "
        "batch 13)",
        "python3.11-doc", "3.11.2-6+deb12u9", "usr/share/doc/python3.11/html/library/time.html",
        "9491c8cfb16a278468c1eb93f2462474ddab425147ac1549e0fa218c13b49c4b",
        "Python Software Foundation License Version 2 (PSF)"),
    Doc("latex-news.pdf",
        "newsletter (LaTeX News, Issues 1-36: the LaTeX Project Team's newsletter that accompanies each "
        "LaTeX release, from Issue 1, June 1994, to Issue 36, November 2022, collected in one PDF, 85 pages; "
        "batch 14)",
        "texlive-latex-base-doc", "2022.20230122-3", "usr/share/doc/texlive-doc/latex/base/ltnews.pdf",
        "d72282cce772fee744bcf9597b4f08704ec1c321d7dacc26a413177770fd8c3a",
        "LPPL 1.3c, the LaTeX Project Public License (The LaTeX Project; texmf-dist/doc/latex/base/*)"),
    Doc("rust-edition-guide.html",
        "migration guide (The Edition Guide: what Rust editions are, how to migrate a crate with cargo fix, "
        "and the changes of Rust 2015, 2018 and 2021, Rust 1.63 documentation, mdBook print page, one HTML "
        "page; batch 14)",
        "rust-doc", "1.63.0+dfsg1-2", "usr/share/doc/rust-doc/html/edition-guide/print.html",
        "efc22af7661242912fd4e190196439e2c28f289371ca118a9ade6469b21e4df7",
        "MIT or Apache-2.0 (The Rust Project Developers; src/doc/*)"),
    Doc("srf-sequence-read-format.pdf",
        "file-format specification (SRF, Generic Format for Sequence Data version 1.3.2, 19th June 2008: the "
        "container, block, read-id and index layout of a file format for DNA sequencing reads and traces, "
        "23 pages; batch 15)",
        "srf-doc", "0.1+dfsg-7", "usr/share/doc/srf-doc/SRF_v_1_3_2_June_19th_2008-0001.pdf",
        "44e462b983cf023da81202cf7828bba42fba6534013f74c99d7ecbe6e8096021",
        "Apache-2.0 (Asim Siddiqui)"),
    Doc("lilypond-engraving-essay.pdf",
        "essay (Essay on automated music engraving: why LilyPond was written, what hand engravers did, how "
        "the program judges and builds a score, with a literature list, The LilyPond development team, for "
        "LilyPond 2.24.1, 40 pages; batch 15)",
        "lilypond-doc-pdf", "2.24.1-2", "usr/share/doc/lilypond/html/Documentation/essay.pdf",
        "4ad40da338b45eba8f89a3356e12bb5c5c43c5557e0bca2daa6335061e4513b5",
        "GFDL-1.3+ (Documentation/*: Han-Wen Nienhuys, Jan Nieuwenhuizen and Graham Percival; the essay "
        "itself: GFDL 1.1 or later, no Invariant Sections)"),
    Doc("expeyes-junior-manual.pdf",
        "hardware instrument's manual (expEYES Junior User's Manual, Experiments for Young Engineers and "
        "Scientists: the terminals, limits and accessories of a USB laboratory interface from the PHOENIX "
        "project, Inter-University Accelerator Centre, New Delhi, and the 50 physics and electronics "
        "experiments done with it, 65 pages; batch 16)",
        "expeyes-doc-en", "4.3-3", "usr/share/expeyes/doc/en-eyesj.pdf",
        "166ade592cd14a3c527a7d1bf63e0ce092c79a085e95ea103ac7ecb05ea4277d",
        "GFDL-1.3+, no Invariant Sections (en/Docs-jr/eyesj.lyx: Ajith Kumar); package GPL-3+"),
    Doc("gnu-shogi-manual.txt",
        "board game's rules (GNU Shogi manual, Japanese chess: the moves, promotion, drops, draws and "
        "handicaps of shogi, an annotated sample game, mating problems, the historical and modern variants, "
        "then the gnushogi program's options and commands, for GNU Shogi 1.4.1, Info plain text; batch 16)",
        "gnushogi", "1.4.2-7", "usr/share/info/gnushogi.info.gz",
        "55a283b27e0e05913f9cac390e40e3cc60904f80ecd712d437346feeb979c8ed",
        "verbatim and modified copies allowed with the permission notice (Yann Dirson, Michael C. Vanier and "
        "the Free Software Foundation); package GPL-1+"),
    Doc("vegan-diversity-vignette.pdf",
        "statistics package vignette on an ecological topic (Vegan: ecological diversity, Jari Oksanen: the "
        "diversity indices, rarefaction, taxonomic and functional diversity, species abundance and species "
        "accumulation models, beta diversity and species pool estimators of community ecology, worked on the "
        "Barro Colorado Island tree counts, processed with vegan 2.6-4 on October 11, 2022, 12 pages; batch 17)",
        "r-cran-vegan", "2.6-4+dfsg-1", "usr/lib/R/site-library/vegan/doc/diversity-vegan.pdf",
        "e653242bcabb9ce27e2f877b192f74a784eaa43ff031851a82626945a7dd96b5",
        "GPL-2 (Jari Oksanen, F. Guillaume Blanchet, Roeland Kindt, Pierre Legendre, Peter R. Minchin, "
        "R. B. O'Hara, Gavin L. Simpson, Peter Solymos, M. Henry H. Stevens, Helene Wagner)"),
    Doc("gnu-sed-news.txt",
        "a well-known program's NEWS file (GNU sed NEWS: the noteworthy changes of each release, bug fixes, "
        "new features and changes in behavior, from sed 3.0 to sed 4.9 of 2022-11-06, 756 lines of plain "
        "text; batch 17)",
        "sed", "4.9-1+deb12u1", "usr/share/doc/sed/NEWS.gz",
        "ced4666ad2f1eb12f29bc0a549c5ee6dd277dad6541f803f7f6147c7473fd888",
        "GPL-3+ (Free Software Foundation, Inc.)"),
    Doc("sgt-puzzles-manual.txt",
        "puzzle collection's manual (Simon Tatham's Portable Puzzle Collection: the features common to all "
        "the games, game IDs, random seeds and command-line options, then the rules, credits, controls and "
        "parameters of each of its 40 one-player puzzles, from Net to Mosaic, version 20230122.806ae71, "
        "3,243 lines of plain text; batch 18)",
        "sgt-puzzles", "20230122.806ae71-2", "usr/share/doc/sgt-puzzles/puzzles.txt.gz",
        "bc1410606aa52bae7ae5061d0e01926a49bbf224da2d541c0ded08d04bc5e199",
        "Expat, the MIT licence (Simon Tatham, Richard Boulton, James Harvey and others)"),
    Doc("sqlite-cves.html",
        "security advisory list (Vulnerabilities: SQLite's statement on the CVEs filed against it, why most do "
        "not apply, the developers' policy toward CVEs, and a table of recent CVEs with the release and date "
        "of each fix or why it is not a bug, from CVE-2019-19317 to CVE-2022-46908, SQLite 3.40.1 "
        "documentation, last modified 2022-12-14, one HTML page; batch 18)",
        "sqlite3-doc", "3.40.1-2+deb12u2", "usr/share/doc/sqlite3/cves.html",
        "87de3390a5b625ecaeea07c8d67601ecbc4c3a0fc4a84e83ad60b9303eac9d31",
        "public domain (D. Richard Hipp)"),
    Doc("django-organization.html",
        "governance document (Organization of the Django Project: its principles, the roles, prerogatives and "
        "membership of the Mergers, the Releasers and the elected five-member technical board, the board's "
        "election process and how the organization is changed, Django 3.2.25 documentation, one HTML page; "
        "batch 19)",
        "python-django-doc", "3:3.2.25-0+deb12u7", "usr/share/doc/python-django-doc/html/internals/organization.html",
        "6fe84f7709554168dd9843ef7a1e5451444d69767d20eeb21649a365d2ed334c",
        "BSD-3-Clause (Django Software Foundation and individual contributors)"),
    Doc("calendar-history.txt",
        "almanac of historical anniversaries (calendar.history of the BSD calendar program: 680 one-line "
        "entries of historical events, from 4004BC to 2006, listed by month and day, most with their year, "
        "FreeBSD revision of 2020-04-17, 742 lines of plain text; batch 19)",
        "calendar", "12.1.8", "usr/share/calendar/calendar.history",
        "08fb50ce86b03619d53745001732dd357b371c649db053725ba541e3ba6ca600",
        "BSD (the UCB BSD licence: The Regents of the University of California; package from bsdmainutils)"),
    Doc("texlive-guide-2022.html",
        "installation guide of a big program (The TeX Live Guide 2022, Karl Berry, editor: getting and installing "
        "the TeX Live distribution on Unix, Mac OS X and Windows, the installer's schemes, directories and "
        "options, post-install setup, testing and uninstalling, tlmgr, Web2C and Kpathsea path searching, and "
        "the release history from 1996 to 2022, one HTML page, about 85 pages as PDF; batch 20)",
        "texlive-base", "2022.20230122-3", "usr/share/doc/texlive-doc/texlive/texlive-en/texlive-en.html",
        "c8e193faaebf8fa60e7769cd6d8aff11a8c78e6eb1fed73be1f9e370a81543a5",
        "public domain (texlive-en.tex: 'Public domain.'; originally written by Sebastian Rahtz and Michel "
        "Goossens, maintained by Karl Berry and others)"),
    Doc("na-phone-area-codes.txt",
        "telephone area-code directory, a table of codes with their meanings (na.phone of GNU miscfiles: the "
        "North American Numbering Plan area codes with each city, state or province and its abbreviation, "
        "2,537 colon-separated entries for 313 area codes, from 201 to 989, plain text; batch 20)",
        "miscfiles", "1.5+dfsg-4", "usr/share/misc/na.phone.gz",
        "8930ea004907002064242b290d0a9deac42774d06547a94f511b56db0afc3125",
        "GPL-2+ (GNU, Free Software Foundation)"),
    Doc("devils-dictionary.txt",
        "satirical dictionary, a classic of American literature (The Devil's Dictionary, Ambrose Bierce, begun "
        "in a weekly paper in 1881, copyright 1911 by Albert and Charles Boni: the author's preface and nearly a "
        "thousand mock definitions from ABASEMENT to ZOOLOGY, with anecdotes and illustrative verses credited to "
        "invented poets, the Internet Wiretap 1st Online Edition of April 15 1993 in dictd's format, 8,552 lines "
        "of plain text; batch 21)",
        "dict-devil", "1.0-13.1", "usr/share/dictd/devil.dict.dz",
        "703d1225d2fb927653bfd8b00e4e96938e0b630c6023edd26702ac6ed50383f8",
        "public domain ('A Public Domain Text, Copyright Expired': Ambrose Bierce, copyright 1911 by Albert and "
        "Charles Boni, Inc.; packaged for dictd by Robert D. Hilliard)"),
    Doc("elements-database.txt",
        "reference table of the chemical elements, a data dictionary of a science (The Elements database "
        "20001107, compiled by Jay F. Kominek, in dictd's format: for each element from hydrogen to ununoctium "
        "(118) its symbol, atomic number and atomic weight, then a short description of its properties, "
        "isotopes, uses and discovery, and the competing names proposed for the heaviest elements, 1,531 "
        "lines of plain text in ISO-8859-1; batch 21)",
        "dict-elements", "20001107-a-9.1", "usr/share/dictd/elements.dict.dz",
        "e9efe696aee6184927471a061b779d3451ac92b2901469a679c88460ada721f4",
        "public domain (Jay F. Kominek: 'I place this in the public domain'); Debian packaging GPL-3 "
        "(Thorsten Alteholz)"),
    Doc("us-declaration-of-independence.txt",
        "historical declaration, a founding political document (The Declaration of Independence of the "
        "Thirteen Colonies, In Congress, July 4, 1776: the self-evident truths and the right to abolish a "
        "destructive government, the grievances against the King of Great Britain [George III], the resolution "
        "that the United Colonies are free and independent States, and the signers listed by state from New "
        "Hampshire to Georgia; added to GNU miscfiles by its Debian packaging, 237 lines of plain ASCII text; "
        "batch 22)",
        "miscfiles", "1.5+dfsg-4", "usr/share/state/us-declaration.gz",
        "5901585a2ff579de7ba4b8fb15ba46e96f5523fb667546042055e8aea3a2d48e",
        "public domain (a United States founding document, in the package's debian/addons, whose copyright "
        "file records it as public information that 'may be distributed or copied', from the US Senate's site)"),
    Doc("iers-leap-seconds.txt",
        "timekeeping data file with comments, a table of the leap seconds (the IERS leap-seconds.list "
        "shipped in tzdata: comments on atomic time (TAI, UTC) and astronomical time (UT1), why leap seconds "
        "are needed, their history, who decides them and on which dates, and the file's last update and "
        "expiry (28 June 2027) as NTP timestamps, then the 28 entries from 1 Jan 1972 to 1 Jan 2017, each "
        "with its NTP timestamp and the resulting TAI-UTC difference, 10 to 37 seconds, 120 lines of plain "
        "ASCII text; batch 22)",
        "tzdata", "2026f-0+deb12u1", "usr/share/zoneinfo/leap-seconds.list",
        "db5a895f16853b03bfc865e8d68f9fc8710ef1740e3400c701cd46a5bbbc3433",
        "public domain (the file: 'This file is in the public domain.', IERS Earth Orientation Center, Paris "
        "Observatory; tzdata: 'This database is in the public domain.', IANA)"),
    Doc("qbrew-primer-recipes.html",
        "recipe collection, homebrew beer recipes (The QBrew Brewing Primer: Some Recipes to Play With, by "
        "David Johnson and Stephen Lowrie: nine five-gallon recipes, from the Roac Irish Stout to the "
        "Dale-on-Erebor Steam Beer, each with a note on how it is brewed, mashed, fermented or lagered and a "
        "table of its malts, yeast and hops with their quantities, alpha acids and boil times; one HTML page "
        "of 12,584 bytes; batch 23)",
        "qbrew", "0.4.1-8+b1", "usr/share/doc/qbrew/primer/primer-recipes.html",
        "155cf71d0f78e1855f7c2d8206227e78945bc831b384071350bf9b96e7df49d3",
        "free redistribution (the page: 'Permission is given to freely copy and redistribute this document.', "
        "David Johnson, Stephen Lowrie, 1997 - 2008); package BSD-2-clause (David Johnson), Debian packaging "
        "GPL-3+"),
    Doc("gnu-units-definitions.txt",
        "units-of-measurement database with historical notes (GNU units' definitions.units, Version 3.15, "
        "September 2022: the SI and its 2019 revision, prefixes, physical constants (2018 CODATA), US, British "
        "and historical units with the laws and dates that defined them, wine bottle sizes, explosive yields, "
        "paper sizes, areas of countries and provinces, and the units left out as out of scope, in comments "
        "beside each definition; 8,275 lines of UTF-8 text (with a BOM), 353,497 bytes; batch 23)",
        "units", "2.22-2", "usr/share/units/definitions.units",
        "95231efe23e659ba0f9bf896f8cd393104530b2f747826fabe82ea36c36678cf",
        "GPL-3+ (the file: Free Software Foundation, 'either version 3 of the License, or (at your option) any "
        "later version'; the package's copyright file: Files: * GPL-3+), Debian packaging GPL-2+"),
    Doc("dhammapada-richards.txt",
        "scripture in verse translation, a Buddhist anthology (The Dhammapada, translated from Pali by John "
        "Richards, version of 15 November 1993: his note of 19 October 1993 on the anthology, its place in the "
        "Pali Canon and its Chinese, Gandhari and Sanskrit relatives, then the 423 verses in 26 chapters, from "
        "The Pairs to The brahmin, each verse followed by its number; 1,625 lines of ASCII text, 70,018 bytes; "
        "batch 24)",
        "display-dhammapada", "1.0-0.1+b1", "usr/share/display-dhammapada/dhammapada-english-transl.txt",
        "ecf2c0aaa251cf370987d5f796b92bf45ea4ad57448881d2fa678c02654c58e8",
        "public domain (the package's copyright file: Files: dhammapada/dhammapada-english-transl.txt, "
        "Copyright: 1993 John Richards, License: Public Domain, as explained at "
        "http://creativecommons.org/licenses/publicdomain; the file: 'Copyright (c) 1993 John Richards'); "
        "the program and Debian packaging GPL-3.0+"),
    Doc("fashion-mnist-readme.md",
        "data set README (Fashion-MNIST's README.md, Zalando Research, as of 2020-05-23: why it was made to "
        "replace MNIST, its four files of 60,000 training and 10,000 test 28x28 grayscale images and labels with "
        "their sizes and checksums, the 10 labels, loading it in Python, TensorFlow and other libraries, the "
        "benchmark and a table of submitted results with their submitters, visualizations and how to cite it; "
        "Markdown, 275 lines, 22,028 bytes; batch 24)",
        "dataset-fashion-mnist", "0.0~git20200523.55506a9-1", "usr/share/doc/dataset-fashion-mnist/README.md.gz",
        "b0495171d9f1874d229a6f73a0ee5d872ed24d4105baf791ff7c9349b0c31837",
        "Expat/MIT (the package's copyright file: Files: * Copyright: 2017, Zalando SE, License: Expat; the "
        "README: 'The MIT License (MIT) Copyright © [2017] Zalando SE'), Debian packaging Expat (Mo Zhou)"),
    Doc("tom-sawyer-twain.txt",
        "novel (The Adventures of Tom Sawyer, Mark Twain (Samuel Langhorne Clemens), the Project Gutenberg "
        "EBook produced by David Widger, shipped as compression test data: the author's preface signed "
        "Hartford, 1876, then 35 chapters and a conclusion, from Aunt Polly's search for Tom to the boys' "
        "treasure; 8,472 lines of ASCII text, 387,964 bytes; batch 25)",
        "golang-github-klauspost-compress-dev", "1.15.12+ds1-3",
        "usr/share/gocode/src/github.com/klauspost/compress/testdata/Mark.Twain-Tom.Sawyer.txt",
        "2a17996ae0fbb92571233a11f490f92a9bceb852468acb894d70c70a1e44b770",
        "public domain (Mark Twain's novel, first published 1876, a Project Gutenberg EBook: 'End of the "
        "Project Gutenberg EBook of The Adventures of Tom Sawyer, Complete'); the package's copyright file: "
        "Files: * BSD-3-Clause (The Go Authors, Klaus Post), Debian packaging BSD-3-Clause"),
    Doc("biblatex-examples.bib",
        "bibliography database (biblatex-examples.bib, the example BibTeX database of the biblatex package "
        "as shipped with biblatex 3.18b: 8 @string abbreviations and 92 entries of 15 types (articles, books "
        "and multivolume books, collections, in-book and in-collection parts, proceedings, a manual, online "
        "sources, patents, a periodical, reports, theses and two sets) with their authors, editors, "
        "translators, dates, publishers, pages and identifiers, most with an annotation on the fields they "
        "show, some with abstracts; 1,661 lines of ASCII text, 68,013 bytes; batch 25)",
        "texlive-bibtex-extra", "2022.20230122-4",
        "usr/share/texlive/texmf-dist/bibtex/bib/biblatex/biblatex/biblatex-examples.bib",
        "e7b05fc8d5bc12f9c41e62abc0b9bf6d22198d7e3b780cae24140cb45355f3cc",
        "LPPL 1.3 (biblatex's README: 'Copyright (c) 2006-2012 Philipp Lehman, 2012-present Philip Lehman, "
        "Joseph Wright, Audrey Boruvka, Philip Kime) ... under the terms of the LaTeX Project Public License "
        "(LPPL), version 1.3'; the package's copyright file: TeX Live, all freely redistributable, Debian "
        "adaptations GPL-2)"),
    Doc("gramps-sample-family.ged",
        "genealogy file (Gramps' sample GEDCOM 5.5 file, exported by Gramps 3.3.0 on 27 Dec 2010: a Smith family "
        "over eight generations, from Sweden and Denmark to California, its 42 individuals with their births, "
        "christenings, baptisms, deaths and places, some with an occupation, an education or an immigration, "
        "15 families with their marriages and children, 4 sources, 2 repositories and 7 notes, one a biography "
        "of Hjalmar Smith's emigration and life in Nevada; 946 lines of UTF-8 text, 17,800 bytes; batch 26)",
        "gramps", "5.1.5-1", "usr/share/doc/gramps/example/gedcom/sample.ged",
        "cb36e0b4a7f1de8e7374f1bbd6258930c458b7895c79d4cb2b2ff83f770dc738",
        "GPL-2+ (the package's copyright file: Files: * Copyright: 2000-2018, 2020 Alex Roitman, ... License: "
        "GPL-2+; the file's header: 'COPR Copyright (c) 2010 Alex Roitman'), Debian packaging GPL-2+"),
    Doc("tzdb-africa.txt",
        "time zone database source file (the tz database's africa file, release 2021e, as vendored in the "
        "chrono-tz crate: for each African country, from Algeria to Zimbabwe, its zone lines (local mean time, "
        "standard offsets and the dates they changed) and daylight-saving rules, 22 zones and 37 links, with the "
        "maintainers' commentary quoting laws, gazettes, news reports and correspondents' mail on each change; "
        "1,563 lines of UTF-8 text, 66,152 bytes; batch 26)",
        "librust-chrono-tz-dev", "0.6.1-3", "usr/share/cargo/registry/chrono-tz-0.6.1/tz/africa",
        "a6320358b715005cd99a1baf5a1bee45c012e87da0c315779d45f3b24ee792c2",
        "public domain (the file: 'This file is in the public domain, so clarified as of 2009-05-17 by Arthur "
        "David Olson.'; tz's LICENSE: 'Unless specified below, all files in the tz code and data ... are in the "
        "public domain'); the package's copyright file: Files: ./tz/* Regents-University-of-California "
        "(BSD-3-Clause style), the crate and Debian packaging MIT or Apache-2.0"),
    Doc("beautiful-chess-studies.pgn",
        "chess study collection (Beautiful Chess Studies (1), a lichess study by thijscom of March-April 2018 "
        "shipped with PyChess's lessons: an introduction, then 63 endgame studies, one a chapter named by its "
        "composer and year, from Loyd, 1860 and Troitsky, 1896 to Pogosyants (13 studies) and Benko, 2003, each a "
        "PGN game with its header tags, its starting position (FEN), the solution's moves and variations, and, "
        "in the chapters without a *, annotations on each move, the traps and the stalemates; 957 lines of "
        "UTF-8 text, 87,913 bytes; batch 27)",
        "pychess", "1.0.3-1",
        "usr/share/pychess/learn/lessons/lichess_study_beautiful-chess-studies-1_by_thijscom_2018.03.05.pgn",
        "ed3830b43ad71cdb0f01f954f05d55297b9e5f15f1b9692990adc2c955ea32f9",
        "GPL-3+ (the package's copyright file: 'Files: * Copyright: (c) 2006 Thomas Dybdahl Ahle ... License: "
        "GPL-3+'), Debian packaging GPL-3+"),
    Doc("fortune-songs-poems.txt",
        "anthology of songs and poems (the songs-poems file of BSD fortune, 'Stuff with meter, at least, and "
        "usually with rhymes.': 720 entries separated by %, poems from Chaucer, Burns, Blake, Byron and Dorothy "
        "Parker to Ogden Nash and Tolkien, song lyrics, hacker parodies, company songs, epitaphs and three "
        "entries of Stephen Pile's The Book of Heroic Failures on bad poets, 512 credited to their author or "
        "source, a few with a year; 7,161 lines of ASCII text with a few overstruck characters, 233,975 bytes; "
        "batch 27)",
        "fortunes", "1:1.99.1-7.3", "usr/share/games/fortunes/songs-poems",
        "eb714d297b468da91b6ca32baefb000279a3e3740b09f8a87db24fe58e010b1a",
        "BSD (the package's copyright file: 'This program falls under the BSD copyright: Copyright (c) 1991 The "
        "Regents of the University of California. All rights reserved. Redistribution and use in source and "
        "binary forms, with or without modification, are permitted provided that ...' the conditions are met)"),
    Doc("debianutils-changelog.txt",
        "Debian package's changelog (the changelog.Debian of debianutils, the Debian-specific utilities which, "
        "run-parts, savelog, tempfile, installkernel, ischroot, add-shell and remove-shell and the former mkboot, "
        "mktemp, readlink and sensible-*: 246 uploads, from Guy Maor's initial release of 18 April 1996 to "
        "5.7-0.5~deb12u1 of 29 July 2023, each with its version, distribution and urgency, its changes and the bugs "
        "they close, and its uploader's name and date, among them Clint Adams's maintainership from 2002, the "
        "removal of mkboot, the deprecation of which and tempfile and the Technical Committee ruling that reverted "
        "it; 2,032 lines of UTF-8 text, 66,587 bytes; batch 28)",
        "debianutils", "5.7-0.5~deb12u1", "usr/share/doc/debianutils/changelog.Debian.gz",
        "72711b95ac4415cfe1a6825c3db4023ae6d3d5b829256b66f149cf5f298dcf1d",
        "GPL-2+ (the package's copyright file: 'It is an original Debian package.', 'Files: * Copyright: (see "
        "individual files) License: GPL-2+'; which: public domain, savelog: the SMAIL General Public License)"),
    Doc("emacs-problems.txt",
        "known-problems list, a troubleshooting guide (Known Problems with GNU Emacs, etc/PROBLEMS of Emacs 28.2: "
        "the problems met in compiling, installing and running Emacs, from startup failures and crash bugs to "
        "fonts, internationalization, X and its window managers, character terminals, GNU/Linux and other Unix "
        "variants, MS-Windows, Cygwin, macOS, build-time and 'make check' failures and legacy systems, each entry "
        "a symptom with its cause as far as known and its workaround or fix, citing the versions, bug reports and "
        "dates involved; Outline-mode plain text, 3,805 lines of UTF-8, 159,312 bytes; batch 28)",
        "emacs-common", "1:28.2+1-15+deb12u4", "usr/share/emacs/28.2/etc/PROBLEMS",
        "fd7f7dc500c3a0745947989043bd1841c663e641ded5ce126eec41bd07446c34",
        "GPL-3+ (the file: 'GNU Emacs is free software: you can redistribute it and/or modify it under the terms "
        "of the GNU General Public License as published by the Free Software Foundation, either version 3 of the "
        "License, or (at your option) any later version.'; the package's copyright file: 'Files: * License: "
        "GPL-3+', the files whose licences allow only verbatim copying removed)"),
)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_member(root: Path, member: str) -> bytes:
    data = (root / member).read_bytes()
    return gzip.decompress(data) if member.endswith((".gz", ".dz")) else data


def obtain(directory: Path) -> list[Path]:
    """Every document under `directory`, checked; .debs downloaded only for what is missing."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    with tempfile.TemporaryDirectory() as tmp:
        unpacked: dict[str, Path] = {}
        for doc in DOCS:
            target = directory / doc.name
            if target.exists() and _sha256(target.read_bytes()) == doc.sha256:
                paths.append(target)
                continue
            data = None
            installed = Path("/") / doc.member
            if installed.exists():
                data = _read_member(Path("/"), doc.member)
                data = data if _sha256(data) == doc.sha256 else None
            if data is None:
                key = f"{doc.package}={doc.version}"
                if key not in unpacked:
                    subprocess.run(["apt-get", "download", key], cwd=tmp, check=True, capture_output=True)
                    deb = next(Path(tmp).glob(f"{doc.package}_*.deb"))
                    unpacked[key] = Path(tmp) / doc.package
                    subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked[key])], check=True)
                    deb.unlink()
                data = _read_member(unpacked[key], doc.member)
            if _sha256(data) != doc.sha256:
                sys.exit(f"{doc.name}: sha256 {_sha256(data)} is not the recorded {doc.sha256}")
            target.write_bytes(data)
            paths.append(target)
    return paths


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "thotqen-genre-docs")
    p.add_argument("--user", default="genre")
    p.add_argument("--no-ingest", action="store_true")
    args = p.parse_args(argv)
    paths = obtain(args.dir)
    print(f"{len(paths)} documents in {args.dir}", file=sys.stderr)
    if args.no_ingest:
        return 0
    thotqen = shutil.which("thotqen") or str(ROOT / ".venv/bin/thotqen")
    return subprocess.run([thotqen, "ingest", *map(str, paths), "--user", args.user]).returncode


if __name__ == "__main__":
    sys.exit(main())
