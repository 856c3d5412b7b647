from specscope.app.cli import main

raise SystemExit(main())
