# make install: the release binary, the systemd unit, the man page and the docs under
# PREFIX, plus the `sluice` system user and /opt/sc4s/env_file (from the template, only when
# absent). The .deb (`cargo deb -p sluice`) installs the same files under /usr.
#
#   make                       cargo build --release -p sluice
#   sudo make install          PREFIX=/usr/local, unit in /etc/systemd/system
#   sudo make uninstall        leaves /opt/sc4s/env_file, /var/lib/sluice and the user
#
# DESTDIR stages the files (packaging); then no user is created and systemd is not told.

PREFIX ?= /usr/local
DESTDIR ?=
CARGO ?= cargo
TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
UNIT_DIR ?= /etc/systemd/system
BIN := $(TARGET_DIR)/release/sluice

.PHONY: all build install uninstall
all: build

build:
	$(CARGO) build --release --locked -p sluice

install: build
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/sluice
	install -d $(DESTDIR)$(UNIT_DIR)
	sed 's|/usr/bin/sluice|$(PREFIX)/bin/sluice|g' config/sluice.service > $(DESTDIR)$(UNIT_DIR)/sluice.service
	chmod 0644 $(DESTDIR)$(UNIT_DIR)/sluice.service
	install -D -m 0644 docs/man/sluice.8 $(DESTDIR)$(PREFIX)/share/man/man8/sluice.8
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/sluice/README.md
	install -D -m 0644 config/sluice.toml $(DESTDIR)$(PREFIX)/share/doc/sluice/sluice.toml
	install -D -m 0644 config/env_file $(DESTDIR)$(PREFIX)/share/doc/sluice/env_file
	install -D -m 0644 config/sluice-container.service $(DESTDIR)$(PREFIX)/share/doc/sluice/sluice-container.service
	# Documentation= names /usr/share/doc/sluice/README.md; with another PREFIX, link it there.
	if [ -z "$(DESTDIR)" ] && [ "$(PREFIX)" != /usr ] && [ ! -e /usr/share/doc/sluice ]; then \
		ln -s $(PREFIX)/share/doc/sluice /usr/share/doc/sluice; fi
	if [ -z "$(DESTDIR)" ]; then \
		getent group sluice >/dev/null || groupadd --system sluice; \
		getent passwd sluice >/dev/null || useradd --system --gid sluice --no-create-home \
			--home-dir /var/lib/sluice --shell /usr/sbin/nologin --comment "sluice syslog receiver" sluice; \
		if [ ! -e /opt/sc4s/env_file ]; then \
			install -D -m 0640 -g sluice config/env_file /opt/sc4s/env_file; fi; \
		if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi; \
		echo "installed; edit /opt/sc4s/env_file, then: systemctl enable --now sluice"; \
	fi

uninstall:
	-if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then systemctl disable --now sluice; fi
	rm -f $(DESTDIR)$(PREFIX)/bin/sluice $(DESTDIR)$(UNIT_DIR)/sluice.service \
		$(DESTDIR)$(PREFIX)/share/man/man8/sluice.8
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/sluice
	if [ -L /usr/share/doc/sluice ]; then rm -f /usr/share/doc/sluice; fi
	-if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
