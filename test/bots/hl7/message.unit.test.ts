import {
  Hl7Context as MpContext,
  Hl7Field as MpField,
  Hl7Message as MpMessage,
  Hl7Segment as MpSegment,
  formatHl7DateTime as mpFormatHl7DateTime,
  parseHl7DateTime as mpParseHl7DateTime,
} from '@medplum/core';
import ivm from '../../../src/bots/sandbox/isolated-vm.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HL7_ISOLATE_GLOBALS, hl7IsolateSource, hl7IsolateSourceSync } from '../../../src/bots/hl7/bundle.js';
import { checkHl7Message } from '../../../src/bots/hl7/check.js';
import {
  Hl7Context,
  Hl7Field,
  Hl7Message,
  Hl7ParseError,
  Hl7Segment,
  formatHl7DateTime,
  isAckCode,
  isHl7Message,
  parseHl7DateTime,
  parseHl7Message,
} from '../../../src/bots/hl7/message.js';

const ADT_A01 = [
  'MSH|^~\\&|EPICADT|DH^1.2.840.1^ISO|LABADT|DH|20240115083000||ADT^A01^ADT_A01|MSG00001|P|2.5.1',
  'EVN|A01|20240115083000',
  'PID|1||123456^^^DH&1.2.3&ISO^MR~987654^^^SSA^SS||SMITH^JOHN^Q^JR^^^L~SMYTHE^JOHNNY^^^^^A||19800101|M|||' +
    '123 MAIN ST^APT 4B^SPRINGFIELD^IL^62704^USA^H||(217)555-1234^PRN^PH~^NET^Internet^john@example.com|||M||ACCT123',
  'NK1|1|SMITH^JANE|SPO^Spouse^HL70063',
  'PV1|1|I|2000^2012^01^DH||||004777^GOOD^SIDNEY^J|||SUR||||ADM|A0|',
].join('\r');

const ORU_R01 = [
  'MSH|^~\\&|LAB|HOSP|EHR|CLINIC|20240116101500-0500||ORU^R01^ORU_R01|LAB20240116001|T|2.5.1|||AL|NE',
  'PID|1||MRN001^^^HOSP&2.16.840.1.113883.3.1&ISO^MR||DOE^JANE^A||19751231|F',
  'ORC|RE|ORD123|FIL456',
  'OBR|1|ORD123|FIL456|24331-1^Lipid panel^LN|||20240116080000',
  'OBX|1|NM|2093-3^Cholesterol^LN||185|mg/dL^milligrams per deciliter^UCUM|<200|N|||F',
  'OBX|2|NM|2571-8^Triglyceride^LN||162|mg/dL|<150|H|||F',
  'OBX|3|ST|8251-1^Comment^LN||Fasting \\T\\ rested; see \\F\\ notes\\E\\ caf\\XC3A9\\ r\\XE9\\sum\\.br\\next \\H\\bold\\N\\||||||F',
  'NTE|1||Reviewed by Smith \\S\\ Jones \\R\\ team',
].join('\r');

// Same ADT with unusual encoding characters: component $, repetition %, escape \, subcomponent ^.
const CUSTOM_DOLLAR = [
  'MSH|$%\\^|APP|FAC|RCV|RFAC|20240101120000||ADT$A08|CTRL9|P|2.4',
  'PID|1||42$$$HOSP^9.9^ISO$MR%43$$$X||DOE$JOHN%ROE$RICHARD||19700101|M',
  'NTE|1||a \\S\\ b \\T\\ c \\R\\ d',
].join('\r');

const CUSTOM_HASH = [
  'MSH#^~\\&#APP#FAC#RCV#RFAC#20240101120000##ORU^R01#CTRL10#P#2.3',
  'OBX#1#ST#X^Y##pipe | is data \\F\\ here#',
].join('\r');

const SAMPLES: Record<string, string> = {
  ADT_A01,
  ORU_R01,
  CUSTOM_DOLLAR,
  CUSTOM_HASH,
};

type AnyMessage = Hl7Message | MpMessage;
type Probe = [string, (m: AnyMessage) => unknown];

// Getter calls run against both libraries; results must be identical.
const PROBES: Probe[] = [
  ['segment count', (m) => m.segments.length],
  ['segment names', (m) => m.segments.map((s) => s.name)],
  ['header name', (m) => m.header.name],
  ['getSegment(0)', (m) => m.getSegment(0)?.toString()],
  ['getSegment(2)', (m) => m.getSegment(2)?.toString()],
  ['getSegment(99)', (m) => m.getSegment(99)],
  ['getSegment(PID)', (m) => m.getSegment('PID')?.toString()],
  ['getSegment(ZZZ)', (m) => m.getSegment('ZZZ')],
  ['getAllSegments(OBX)', (m) => m.getAllSegments('OBX').map((s) => s.toString())],
  ['getAllSegments(ZZZ)', (m) => m.getAllSegments('ZZZ')],
  ['deprecated get/getAll', (m) => [m.get('PID')?.toString(), m.getAll('OBX').length]],
  ['MSH fields 0..16', (m) => Array.from({ length: 17 }, (_, i) => m.header.getField(i)?.toString())],
  [
    'MSH getField(1/2) components',
    (m) => [m.header.getField(1)?.components, m.header.getField(2)?.components],
  ],
  ['MSH fields getter', (m) => m.header.fields.map((f) => f.toString())],
  ['MSH deprecated get(i)', (m) => [0, 1, 2, 3, 8].map((i) => m.header.get(i)?.toString())],
  ['MSH-9 components', (m) => [1, 2, 3, 4].map((c) => m.header.getComponent(9, c))],
  ['MSH-4 subcomponents', (m) => [0, 1, 2].map((s) => m.header.getComponent(4, 1, s))],
  ['MSH-3 via field', (m) => m.header.getField(3)?.getComponent(1)],
  ['PID fields', (m) => m.getSegment('PID')?.fields.map((f) => f.toString())],
  ['PID-3 components', (m) => m.getSegment('PID')?.getField(3)?.components],
  [
    'PID-3 rep/comp/sub',
    (m) => {
      const pid = m.getSegment('PID');
      const out: string[] = [];
      const repetitions = pid?.getField(3)?.components.length ?? 0; // Medplum throws past the last one
      for (let rep = 0; rep < repetitions; rep++) {
        for (const comp of [1, 2, 4, 5, 9]) {
          out.push(pid?.getComponent(3, comp, undefined, rep) ?? '<none>');
          for (const sub of [0, 1, 2, 3]) out.push(pid?.getComponent(3, comp, sub, rep) ?? '<none>');
        }
      }
      return out;
    },
  ],
  [
    'PID-5 names',
    (m) =>
      (m.getSegment('PID')?.getField(5)?.components ?? []).map((_, rep) =>
        [1, 2, 3, 7].map((c) => m.getSegment('PID')?.getComponent(5, c, undefined, rep)),
      ),
  ],
  ['PID-5 field.get (0-based)', (m) => [0, 1, 2].map((c) => m.getSegment('PID')?.getField(5)?.get(c))],
  ['PID-11 address', (m) => [1, 2, 3, 4, 5].map((c) => m.getSegment('PID')?.getComponent(11, c))],
  ['PID getField(0)', (m) => m.getSegment('PID')?.getField(0)?.toString()],
  ['PID getField(99)', (m) => m.getSegment('PID')?.getField(99)],
  ['PID getComponent(99,1)', (m) => m.getSegment('PID')?.getComponent(99, 1)],
  ['PID getComponent(5,0)', (m) => m.getSegment('PID')?.getComponent(5, 0)],
  ['OBX-5 values (raw)', (m) => m.getAllSegments('OBX').map((s) => s.getComponent(5, 1))],
  ['OBX-6 units', (m) => m.getAllSegments('OBX').map((s) => [s.getComponent(6, 1), s.getComponent(6, 2)])],
  ['NTE-3 raw', (m) => m.getSegment('NTE')?.getComponent(3, 1)],
  ['context', (m) => ({ ...m.context })],
  ['context getMsh1/2', (m) => [m.context.getMsh1(), m.context.getMsh2()]],
  ['getAckType (not an ACK)', (m) => m.getAckType()],
  ['toString', (m) => m.toString()],
];

describe('compatibility with @medplum/core', () => {
  for (const [sampleName, text] of Object.entries(SAMPLES)) {
    it(`gives the same results as Medplum for ${sampleName}`, () => {
      const ours = Hl7Message.parse(text);
      const theirs = MpMessage.parse(text);
      for (const [probeName, probe] of PROBES) {
        expect(probe(ours), `${sampleName}: ${probeName}`).toEqual(probe(theirs));
      }
    });
  }

  it('matches Medplum for setters and string constructors', () => {
    const edits: ((m: AnyMessage) => unknown)[] = [
      (m) => m.getSegment('PID')?.setComponent(5, 1, 'JONES'),
      (m) => m.getSegment('PID')?.setComponent(5, 2, 'Z', undefined, 2),
      (m) => m.getSegment('PID')?.setComponent(3, 4, 'NEWAUTH', 1, 0),
      (m) => m.getSegment('PID')?.setComponent(3, 4, 'X', 5, 1),
      (m) => m.getSegment('PID')?.setField(30, 'EXTRA^VALUE'),
      (m) => m.header.setField(4, 'NEWFAC'),
      (m) => m.header.setField(1, '#'),
      (m) => m.header.setField(2, '!!!!'),
      (m) => m.getSegment('PID')?.getField(5)?.setComponent(0, 'x'),
      (m) => m.getSegment('EVN')?.setComponent(1, 1, 'A04'),
    ];
    const ours = Hl7Message.parse(ADT_A01);
    const theirs = MpMessage.parse(ADT_A01);
    for (const edit of edits) expect(edit(ours)).toEqual(edit(theirs));
    expect(ours.toString()).toEqual(theirs.toString());
    expect(ours.getSegment('PID')?.getComponent(5, 2, undefined, 2)).toBe('Z');

    const ctx = new Hl7Context();
    const mpCtx = new MpContext();
    expect(Hl7Field.parse('a^b&c~d^e&f&g', ctx).components).toEqual(
      MpField.parse('a^b&c~d^e&f&g', mpCtx).components,
    );
    expect(Hl7Field.parse('a^b&c~d^e&f&g').getComponent(2, 2, 1)).toBe(
      MpField.parse('a^b&c~d^e&f&g').getComponent(2, 2, 1),
    );
    const seg = Hl7Segment.parse('OBX|1|NM|X^Y||5', ctx);
    const mpSeg = MpSegment.parse('OBX|1|NM|X^Y||5', mpCtx);
    expect(seg.name).toBe(mpSeg.name);
    expect(seg.getComponent(3, 2)).toBe(mpSeg.getComponent(3, 2));
    expect(seg.toString()).toBe(mpSeg.toString());

    const built = new Hl7Message([
      new Hl7Segment(['MSH', '^~\\&', 'A', 'B', 'C', 'D', '2024', '', 'ADT^A01', '1', 'P', '2.5']),
      'PID|1||X',
    ]);
    const mpBuilt = new MpMessage([
      new MpSegment(['MSH', '^~\\&', 'A', 'B', 'C', 'D', '2024', '', 'ADT^A01', '1', 'P', '2.5']),
      'PID|1||X',
    ]);
    expect(built.toString()).toBe(mpBuilt.toString());
    expect(built.header.getComponent(9, 2)).toBe(mpBuilt.header.getComponent(9, 2));
  });

  it('builds the same ACK as Medplum (apart from the control id)', () => {
    for (const text of [
      ADT_A01,
      CUSTOM_DOLLAR,
      'MSH|^~\\&|A|B|C|D|2024||ADT|X1|P|2.3',
      'MSH|^~\\&|A|B|C|D|2024||ADT^A04|X2',
    ]) {
      for (const ackCode of ['AA', 'AE', 'AR', 'CA'] as const) {
        const ours = Hl7Message.parse(text).buildAck({ ackCode });
        const theirs = MpMessage.parse(text).buildAck({ ackCode });
        const except10 = (m: AnyMessage): unknown[] =>
          [1, 2, 3, 4, 5, 6, 8, 9, 11, 12].map((i) => m.header.getField(i)?.toString());
        if (text !== CUSTOM_DOLLAR) expect(except10(ours)).toEqual(except10(theirs));
        expect(ours.getSegment('MSA')?.toString()).toBe(theirs.getSegment('MSA')?.toString());
        expect(ours.getAckType()).toBe(theirs.getAckType());
      }
    }
  });

  it('formats and parses HL7 date/times like Medplum', () => {
    for (const value of [
      '2024',
      '202401',
      '20240115',
      '202401150830',
      '20240115083045',
      '20240115083045.123',
      '20240115083045-0500',
      '20240115083045+0130',
      '20240115083045.250+0000',
    ]) {
      expect(parseHl7DateTime(value), value).toBe(mpParseHl7DateTime(value));
      expect(parseHl7DateTime(value, { tzOffset: '-0800' }), value).toBe(
        mpParseHl7DateTime(value, { tzOffset: '-0800' }),
      );
    }
    expect(parseHl7DateTime(undefined)).toBeUndefined();
    expect(parseHl7DateTime('')).toBeUndefined();
    for (const iso of ['2024-01-15T08:30:45.000Z', '2024-01-15T08:30:45.123Z', '1999-12-31T23:59:59.120Z']) {
      expect(formatHl7DateTime(iso)).toBe(mpFormatHl7DateTime(iso));
      expect(formatHl7DateTime(new Date(iso))).toBe(mpFormatHl7DateTime(new Date(iso)));
    }
    // Documented deviations: fractions are fractions, and milliseconds are zero-padded.
    expect(parseHl7DateTime('20240115083045.5')).toBe('2024-01-15T08:30:45.500Z');
    expect(formatHl7DateTime('2024-01-15T08:30:45.005Z')).toBe('20240115083045.005');
  });

  it('recognises Medplum messages as HL7 messages (duck typing) and rejects other values', () => {
    expect(isHl7Message(Hl7Message.parse(ADT_A01))).toBe(true);
    expect(isHl7Message(MpMessage.parse(ADT_A01))).toBe(true);
    for (const value of [null, undefined, 'MSH|^~\\&|', {}, { toString: () => 'x' }, 42]) {
      expect(isHl7Message(value)).toBe(false);
    }
  });
});

describe('parsing and access', () => {
  it('reads an ADT^A01 with Medplum index conventions', () => {
    const msg = Hl7Message.parse(ADT_A01);
    expect(msg.segments.map((s) => s.name)).toEqual(['MSH', 'EVN', 'PID', 'NK1', 'PV1']);
    expect(msg.header.getField(1)?.toString()).toBe('|');
    expect(msg.header.getField(2)?.toString()).toBe('^~\\&');
    expect(msg.header.getComponent(9, 1)).toBe('ADT');
    expect(msg.header.getComponent(9, 2)).toBe('A01');
    expect(msg.header.getField(10)?.toString()).toBe('MSG00001');
    expect(msg.header.getComponent(4, 2)).toBe('1.2.840.1');
    const pid = msg.getSegment('PID') as Hl7Segment;
    expect(pid.getComponent(5, 1)).toBe('SMITH');
    expect(pid.getComponent(5, 2)).toBe('JOHN');
    expect(pid.getComponent(5, 1, undefined, 1)).toBe('SMYTHE');
    expect(pid.getField(3)?.components.length).toBe(2);
    expect(pid.getComponent(3, 4)).toBe('DH&1.2.3&ISO');
    expect(pid.getComponent(3, 4, 0)).toBe('DH');
    expect(pid.getComponent(3, 4, 1)).toBe('1.2.3');
    expect(pid.getComponent(3, 4, 2)).toBe('ISO');
    expect(pid.getComponent(3, 4, 3)).toBe('');
    expect(pid.getComponent(3, 1, undefined, 1)).toBe('987654');
    expect(pid.getComponent(13, 4, undefined, 1)).toBe('john@example.com');
    // Out of range: '' from getComponent (Medplum throws for a missing repetition), undefined from getField.
    expect(pid.getComponent(3, 1, undefined, 5)).toBe('');
    expect(pid.getField(99)).toBeUndefined();
    expect(msg.getSegment(1)?.name).toBe('EVN');
  });

  it('reads an ORU^R01 with repeated OBX segments', () => {
    const msg = Hl7Message.parse(ORU_R01);
    const obx = msg.getAllSegments('OBX');
    expect(obx.map((s) => [s.getComponent(3, 2), s.getComponent(5, 1), s.getComponent(8, 1)])).toEqual([
      ['Cholesterol', '185', 'N'],
      ['Triglyceride', '162', 'H'],
      ['Comment', expect.any(String), ''],
    ]);
    expect(msg.getSegment('PID')?.getComponent(3, 4, 1)).toBe('2.16.840.1.113883.3.1');
    expect(parseHl7DateTime(msg.header.getComponent(7, 1))).toBe('2024-01-16T15:15:00.000Z');
  });

  it('decodes escape sequences only in the *Decoded getters', () => {
    const msg = Hl7Message.parse(ORU_R01);
    const obx3 = msg.getAllSegments('OBX')[2];
    expect(obx3.getComponent(5, 1)).toBe(
      'Fasting \\T\\ rested; see \\F\\ notes\\E\\ caf\\XC3A9\\ r\\XE9\\sum\\.br\\next \\H\\bold\\N\\',
    );
    expect(obx3.getComponentDecoded(5, 1)).toBe(
      'Fasting & rested; see | notes\\ café résum\\.br\\next \\H\\bold\\N\\',
    );
    expect(obx3.getField(5)?.getComponentDecoded(1)).toBe(obx3.getComponentDecoded(5, 1));
    expect(msg.getSegment('NTE')?.getComponentDecoded(3, 1)).toBe('Reviewed by Smith ^ Jones ~ team');

    const ctx = new Hl7Context();
    expect(ctx.unescape('\\X41424344\\')).toBe('ABCD');
    expect(ctx.unescape('\\XE282AC\\ and \\XF09F9982\\')).toBe('€ and 🙂');
    expect(ctx.unescape('odd \\X4\\ hex, \\Zabc\\, \\C2842\\, \\.sp2\\, \\\\')).toBe(
      'odd \\X4\\ hex, \\Zabc\\, \\C2842\\, \\.sp2\\, \\\\',
    );
    expect(ctx.unescape('unterminated \\F')).toBe('unterminated \\F');
    expect(ctx.unescape('no escapes')).toBe('no escapes');
    const plain = 'a|b^c~d&e\\f\r\ng';
    expect(ctx.escape(plain)).toBe('a\\F\\b\\S\\c\\R\\d\\T\\e\\E\\f\\X0D\\\\X0A\\g');
    expect(ctx.unescape(ctx.escape(plain))).toBe(plain);
  });

  it('reads custom encoding characters from MSH-1 and MSH-2', () => {
    const dollar = Hl7Message.parse(CUSTOM_DOLLAR);
    expect({ ...dollar.context }).toEqual({
      segmentSeparator: '\r',
      fieldSeparator: '|',
      componentSeparator: '$',
      repetitionSeparator: '%',
      escapeCharacter: '\\',
      subcomponentSeparator: '^',
    });
    expect(dollar.header.getComponent(9, 2)).toBe('A08');
    const pid = dollar.getSegment('PID') as Hl7Segment;
    expect(pid.getComponent(3, 4, 1)).toBe('9.9');
    expect(pid.getComponent(3, 1, undefined, 1)).toBe('43');
    expect(pid.getComponent(5, 2, undefined, 1)).toBe('RICHARD');
    expect(dollar.getSegment('NTE')?.getComponentDecoded(3, 1)).toBe('a $ b ^ c % d');
    expect(dollar.toString()).toBe(CUSTOM_DOLLAR);

    const hash = Hl7Message.parse(CUSTOM_HASH);
    expect(hash.context.fieldSeparator).toBe('#');
    expect(hash.header.getField(1)?.toString()).toBe('#');
    expect(hash.header.getComponent(9, 2)).toBe('R01');
    expect(hash.header.getField(10)?.toString()).toBe('CTRL10');
    expect(hash.getSegment('OBX')?.getComponentDecoded(5, 1)).toBe('pipe | is data # here');
    expect(hash.toString()).toBe(CUSTOM_HASH);
    // Hl7Segment.parse without a context reads an MSH's own separators (Medplum would assume |^~\&).
    expect(Hl7Segment.parse(CUSTOM_HASH.split('\r')[0]).getComponent(9, 2)).toBe('R01');
    expect(Hl7Segment.parse(CUSTOM_HASH.split('\r')[0]).context.fieldSeparator).toBe('#');
    // The ACK keeps the message's encoding characters.
    expect(hash.buildAck().header.toString()).toMatch(
      /^MSH#\^~\\&#RCV#RFAC#APP#FAC#\d{14}(\.\d{3})?##ACK\^R01#\d+#P#2\.3$/,
    );

    // A short MSH-2 (no subcomponent separator) leaves '&' as data; HL7 2.7's truncation character is kept.
    const short = Hl7Message.parse('MSH|^~\\|A|B&C|R|F|2024||ADT^A01|1|P|2.3');
    expect(short.context.subcomponentSeparator).toBe('');
    expect(short.header.getComponent(4, 1, 0)).toBe('B&C');
    const truncation = 'MSH|^~\\&#|A|B|R|F|2024||ADT^A01|1|P|2.7';
    expect(Hl7Message.parse(truncation).header.getField(2)?.toString()).toBe('^~\\&#');
    expect(Hl7Message.parse(truncation).toString()).toBe(truncation);
  });

  it('round-trips toString byte for byte, normalising segment separators to \\r', () => {
    for (const text of Object.values(SAMPLES)) {
      const lines = text.split('\r');
      expect(Hl7Message.parse(text).toString()).toBe(text);
      expect(Hl7Message.parse(lines.join('\n')).toString()).toBe(text);
      expect(Hl7Message.parse(lines.join('\r\n')).toString()).toBe(text);
      expect(Hl7Message.parse(text + '\r').toString()).toBe(text + '\r');
      expect(Hl7Message.parse(lines.join('\r\n') + '\r\n').toString()).toBe(text + '\r');
      expect(Hl7Message.parse(lines.join('\n')).segments.length).toBe(lines.length);
    }
    // Trailing empty fields, empty components and blank lines survive.
    const odd = 'MSH|^~\\&|A||||||ADT^A01^|1|P|2.5|||\r\rPID|||^^^~~||\rZZ1|a^^|';
    expect(Hl7Message.parse(odd).toString()).toBe(odd);
    expect(Hl7Message.parse(odd).segments.map((s) => s.name)).toEqual(['MSH', 'PID', 'ZZ1']);
    // Once modified, the message is rebuilt from its segments (and keeps a trailing separator).
    const msg = Hl7Message.parse(ADT_A01.split('\r').join('\n') + '\n');
    msg.getSegment('PID')?.setComponent(5, 1, 'JONES');
    expect(msg.toString()).toBe(ADT_A01.replace('SMITH^JOHN^Q', 'JONES^JOHN^Q') + '\r');
    // Direct edits of the public arrays are seen too.
    const direct = Hl7Message.parse(ADT_A01);
    (direct.getSegment('EVN') as Hl7Segment).fields[1].components[0][0] = 'A04';
    expect(direct.toString()).toContain('\rEVN|A04|');
  });

  it('supports building and editing segments', () => {
    const msg = Hl7Message.parse(ADT_A01);
    const obx = new Hl7Segment(['OBX', '1', 'ST', 'X^Y', '', msg.context.escape('a|b & c')], msg.context);
    expect(msg.setSegment(99, obx)).toBe(true);
    expect(msg.getSegment(5)?.toString()).toBe('OBX|1|ST|X^Y||a\\F\\b \\T\\ c');
    expect(msg.getSegment('OBX')?.getComponentDecoded(5, 1)).toBe('a|b & c');
    expect(msg.setSegment(0, obx)).toBe(false);
    expect(msg.setSegment('PID', msg.header)).toBe(false);
    expect(msg.setSegment('ZZZ', obx)).toBe(false);
    expect(msg.setSegment('NK1', new Hl7Segment(['NK1', '1', 'DOE^JOHN']))).toBe(true);
    expect(msg.getSegment(3)?.getComponent(2, 2)).toBe('JOHN');
    // setComponent creates missing fields (Medplum returns false) but never touches MSH-1/MSH-2.
    const evn = msg.getSegment('EVN') as Hl7Segment;
    expect(evn.setComponent(7, 2, 'X', 1, 1)).toBe(true);
    expect(evn.toString()).toBe('EVN|A01|20240115083000|||||~^&X');
    expect(msg.header.setComponent(2, 1, 'x')).toBe(false);
    expect(msg.header.setComponent(1, 1, 'x')).toBe(false);
    expect(msg.header.getField(2)?.toString()).toBe('^~\\&');
  });
});

describe('buildAck', () => {
  it('builds an ACK with swapped sender/receiver, new control id and MSA', () => {
    const msg = Hl7Message.parse(ADT_A01);
    const now = new Date('2024-03-04T05:06:07.089Z');
    const ack = msg.buildAck({ now });
    const msh = ack.header;
    expect(msh.getField(3)?.toString()).toBe('LABADT');
    expect(msh.getField(4)?.toString()).toBe('DH');
    expect(msh.getField(5)?.toString()).toBe('EPICADT');
    expect(msh.getField(6)?.toString()).toBe('DH^1.2.840.1^ISO');
    expect(msh.getField(7)?.toString()).toBe('20240304050607.089');
    expect(msh.getField(9)?.toString()).toBe('ACK^A01^ACK');
    expect(msh.getField(10)?.toString()).toMatch(/^\d{16}$/);
    expect(msh.getField(10)?.toString()).not.toBe('MSG00001');
    expect(msh.getField(11)?.toString()).toBe('P');
    expect(msh.getField(12)?.toString()).toBe('2.5.1');
    expect(ack.getSegment('MSA')?.toString()).toBe('MSA|AA|MSG00001|OK');
    expect(ack.getAckType()).toBe('AA');
    expect(ack.segments.length).toBe(2);
    expect(ack.toString().split('\r')).toHaveLength(2);
    // The ACK text can be re-parsed.
    expect(Hl7Message.parse(ack.toString()).getSegment('MSA')?.getComponent(2, 1)).toBe('MSG00001');
    // Control ids differ between ACKs.
    expect(msg.buildAck({ now }).header.getField(10)?.toString()).not.toBe(msh.getField(10)?.toString());
  });

  it('supports AE/AR, a custom text, control id and ERR segment; mirrors MSH-11', () => {
    const msg = Hl7Message.parse(ORU_R01);
    const err = Hl7Segment.parse('ERR||PID^1^3|101^Required field missing^HL70357|E', msg.context);
    const ack = msg.buildAck({ ackCode: 'AE', text: 'bad PID|3', controlId: 'ACK1', errSegment: err });
    expect(ack.toString().split('\r').slice(1)).toEqual([
      'MSA|AE|LAB20240116001|bad PID\\F\\3',
      'ERR||PID^1^3|101^Required field missing^HL70357|E',
    ]);
    expect(ack.header.getField(10)?.toString()).toBe('ACK1');
    expect(ack.header.getField(11)?.toString()).toBe('T');
    expect(ack.getAckType()).toBe('AE');
    expect(msg.buildAck({ ackCode: 'AR' }).getSegment('MSA')?.getComponent(3, 1)).toBe('Application Reject');
    expect(() => msg.buildAck({ ackCode: 'XX' as 'AA' })).toThrow(/Invalid HL7 ACK code/);
    expect(isAckCode('CR')).toBe(true);
    expect(isAckCode('toString')).toBe(false);
  });
});

describe('rejecting non-HL7', () => {
  const cases: [string, unknown, RegExp][] = [
    ['empty', '', /the message is empty/],
    [
      'JSON',
      '{"resourceType":"Patient"}',
      /must start with an MSH segment, but starts with "\{\\"resourceType/,
    ],
    ['PID first', 'PID|1||X\rMSH|^~\\&|', /must start with an MSH segment/],
    ['leading whitespace', ' MSH|^~\\&|A', /must start with an MSH segment/],
    ['MSH only', 'MSH', /missing the field separator \(MSH-1\)/],
    [
      'no MSH-2 terminator',
      'MSH|^~\\&',
      /encoding characters \(MSH-2\) must be followed by a field separator/,
    ],
    ['MSH-2 on next line', 'MSH|^~\\&\rPID|1', /must be followed by a field separator/],
    ['empty MSH-2', 'MSH||A|B', /MSH-2 \(encoding characters\) is empty/],
    ['long MSH-2', 'MSH|^~\\&#@|A', /must be 1 to 5 characters/],
    ['duplicate separators', 'MSH|^^\\&|A', /must all be different/],
    ['not a string', 42, /expected a string, got number/],
  ];
  for (const [name, input, message] of cases) {
    it(`Hl7Message.parse and parseHl7Message reject ${name}`, () => {
      expect(() => Hl7Message.parse(input as string)).toThrow(message);
      expect(() => parseHl7Message(input as string)).toThrow(Hl7ParseError);
    });
  }

  it('parseHl7Message also requires MSH through MSH-9 and valid segment names', () => {
    expect(() => parseHl7Message('MSH|^~\\&|A|B|C|D')).toThrow(
      'Invalid HL7 message: MSH segment is too short: it has 6 fields, at least 9 (through MSH-9) are required',
    );
    expect(() => parseHl7Message('MSH|^~\\&|A|B|C|D|2024||')).toThrow(/MSH-9 \(message type\) is empty/);
    expect(() => parseHl7Message('MSH|^~\\&|A|B|C|D|2024||ADT^A01\rhello world')).toThrow(
      /segment 2 has an invalid name "hello world"/,
    );
    expect(() => parseHl7Message('MSH|^~\\&|A|B|C|D|2024||ADT^A01|1', { minMshFields: 12 })).toThrow(
      /it has 10 fields, at least 12/,
    );
    expect(
      parseHl7Message('MSH|^~\\&|A|B|C|D|2024||ADT^A01\rzz1|x', { validateSegmentNames: false }).segments,
    ).toHaveLength(2);
    expect(parseHl7Message(ADT_A01).toString()).toBe(ADT_A01);
    try {
      parseHl7Message('not hl7');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(Hl7ParseError);
      expect(error).toBeInstanceOf(Error);
      expect((error as Hl7ParseError).name).toBe('Hl7ParseError');
      expect((error as Hl7ParseError).type).toBe('entity.parse.failed');
    }
  });
});

describe("the server's check of an HL7 body (checkHl7Message)", () => {
  const outcome = (f: () => unknown) => {
    try {
      f();
      return 'ok';
    } catch (e) {
      return `${(e as Error).name}: ${(e as Error).message}`;
    }
  };

  it('accepts and refuses exactly what parseHl7Message does, with the same messages', () => {
    const inputs = [
      ADT_A01,
      ORU_R01,
      ADT_A01.split('\r').join('\r\n') + '\r\n',
      ADT_A01.split('\r').join('\n') + '\n\n',
      '',
      '{"resourceType":"Patient"}',
      'PID|1||X\rMSH|^~\\&|',
      'MSH',
      'MSH|^~\\&',
      'MSH|^~\\&\rPID|1',
      'MSH||A|B',
      'MSH|^~\\&#@|A',
      'MSH|^^\\&|A',
      'MSH|^~\\&|A|B|C|D',
      'MSH|^~\\&|A|B|C|D|2024||',
      'MSH|^~\\&|A|B|C|D|2024||ADT^A01',
      'MSH|^~\\&|A|B|C|D|2024||^A01',
      'MSH|^~\\&|A|B|C|D|2024||ADT^A01\rhello world',
      'MSH|^~\\&|A|B|C|D|2024||ADT^A01\rPID~X|1',
      'MSH|^~\\&|A|B|C|D|2024||ADT^A01\rPI|1',
      'MSH|^~\\&|A|B|C|D|2024||ADT^A01\r\rEVN^x|1\rpid|1',
      'MSH#^~\\&#A#B#C#D#2024##ORU^R01\rOBX#1',
    ];
    for (const text of inputs)
      expect(
        outcome(() => checkHl7Message(text)),
        text,
      ).toBe(outcome(() => parseHl7Message(text)));
  });

  it('checks 5 MB of separators in linear time, building no message', () => {
    const text = `MSH|^~\\&|A|B|C|D|2024||ADT^A01${'|'.repeat(5 * 1024 * 1024)}\r${'PID|1\n'.repeat(100_000)}`;
    const started = performance.now();
    checkHl7Message(text);
    expect(performance.now() - started).toBeLessThan(1500);
  });
});

describe('isolated-vm', () => {
  let isolate: ivm.Isolate;
  let context: ivm.Context;

  beforeAll(async () => {
    isolate = new ivm.Isolate({ memoryLimit: 32 });
    context = await isolate.createContext();
    await context.eval(await hl7IsolateSource());
    await context.global.set('ADT', ADT_A01);
    await context.global.set('ORU', ORU_R01);
  });

  afterAll(() => {
    isolate.dispose();
  });

  it('caches the bundle, sync and async', async () => {
    const source = await hl7IsolateSource();
    expect(await hl7IsolateSource()).toBe(source);
    expect(hl7IsolateSourceSync()).toBe(source);
    expect(source).not.toMatch(/\brequire\(|\bimport\s*\(|\bprocess\.|\bBuffer\b/);
  });

  it('defines the globals as a plain script', async () => {
    for (const name of HL7_ISOLATE_GLOBALS) {
      expect(await context.eval(`typeof globalThis.${name}`), name).toBe(
        name === 'AckCode' ? 'object' : 'function',
      );
    }
    expect(await context.eval('Object.keys(__medplumHl7).sort().join()')).toBe(
      [...HL7_ISOLATE_GLOBALS].sort().join(),
    );
    expect(await context.eval('typeof require + typeof process + typeof Buffer')).toBe(
      'undefinedundefinedundefined',
    );
  });

  it('parses and reads messages inside the isolate', async () => {
    expect(await context.eval('Hl7Message.parse(ADT).getSegment("PID").getField(5).getComponent(1)')).toBe(
      'SMITH',
    );
    expect(await context.eval('Hl7Message.parse(ADT).getSegment("PID").getComponent(3, 4, 1)')).toBe('1.2.3');
    expect(
      await context.eval('Hl7Message.parse(ORU).getAllSegments("OBX")[2].getComponentDecoded(5, 1)'),
    ).toBe('Fasting & rested; see | notes\\ café résum\\.br\\next \\H\\bold\\N\\');
    expect(await context.eval('Hl7Message.parse(ADT.split("\\r").join("\\r\\n")).toString() === ADT')).toBe(
      true,
    );
    expect(await context.eval('parseHl7DateTime(Hl7Message.parse(ORU).header.getComponent(7, 1))')).toBe(
      '2024-01-16T15:15:00.000Z',
    );
    expect(
      await context.eval(
        'try { Hl7Message.parse("hello"); "no error" } catch (e) { e.name + ": " + e.message }',
      ),
    ).toBe('Hl7ParseError: Invalid HL7 message: it must start with an MSH segment, but starts with "hello"');
  });

  it('runs a Medplum-style bot and lets the sandbox recognise the returned message', async () => {
    // What a sandbox wrapper would do: run the bot, then serialise an Hl7Message result with toString().
    const script = `
      (() => {
        const { Hl7Message: Msg } = globalThis.__medplumHl7;
        async function handler(medplum, event) {
          const input = event.input;
          const pid = input.getSegment('PID');
          if (!pid) return input.buildAck({ ackCode: 'AR' });
          return input.buildAck({ ackCode: pid.getComponent(8, 1) === 'M' ? 'AA' : 'AE' });
        }
        return handler(undefined, { input: Msg.parse(ADT) }).then((result) =>
          Hl7Message.isHl7Message(result) && result instanceof Hl7Message
            ? { hl7: result.toString() }
            : { json: JSON.stringify(result) });
      })()`;
    const result = (await context.eval(script, { promise: true, copy: true })) as { hl7?: string };
    expect(result.hl7).toBeDefined();
    const ack = Hl7Message.parse(result.hl7 as string);
    expect(ack.getSegment('MSA')?.toString()).toBe('MSA|AA|MSG00001|OK');
    expect(ack.header.getField(5)?.toString()).toBe('EPICADT');
  });
});
